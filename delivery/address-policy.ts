import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/** Link-local and cloud metadata addresses: never a webhook target. */
const ALWAYS_REFUSED = new BlockList()
ALWAYS_REFUSED.addSubnet('169.254.0.0', 16, 'ipv4')
ALWAYS_REFUSED.addAddress('100.100.100.200', 'ipv4')
ALWAYS_REFUSED.addSubnet('0.0.0.0', 8, 'ipv4')
ALWAYS_REFUSED.addSubnet('fe80::', 10, 'ipv6')
ALWAYS_REFUSED.addAddress('fd00:ec2::254', 'ipv6')
ALWAYS_REFUSED.addAddress('::', 'ipv6')

/** Loopback and private ranges: refused unless WEBHOOK_ALLOW_PRIVATE is on. */
const PRIVATE = new BlockList()
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4')
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4')
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4')
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4')
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4')
PRIVATE.addAddress('::1', 'ipv6')
PRIVATE.addSubnet('fc00::', 7, 'ipv6')

export class RefusedAddressError extends Error {}

function family (address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4'
}

/** Why an address may not be a webhook target, or null when it may. IPv4-mapped IPv6 is unwrapped. */
export function refusal (address: string, allowPrivate: boolean): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  const plain = mapped?.[1] ?? address
  if (ALWAYS_REFUSED.check(plain, family(plain))) return `address ${address} is link-local, unspecified or a metadata service`
  if (!allowPrivate && PRIVATE.check(plain, family(plain))) {
    return `address ${address} is loopback or private (set WEBHOOK_ALLOW_PRIVATE=true to allow it)`
  }
  return null
}

/**
 * Resolves the host at send time and vets every address it resolves to; the request then
 * connects to the vetted address, so a DNS answer cannot change between check and connect.
 */
export async function resolveTarget (hostname: string, allowPrivate: boolean): Promise<{ address: string, family: 4 | 6 }> {
  const host = hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host) !== 0
    ? [{ address: host, family: isIP(host) as 4 | 6 }]
    : (await lookup(host, { all: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }))
  if (addresses.length === 0) throw new RefusedAddressError(`${hostname} did not resolve`)
  for (const a of addresses) {
    const why = refusal(a.address, allowPrivate)
    if (why !== null) throw new RefusedAddressError(`refused: ${why}`)
  }
  return addresses[0]
}
