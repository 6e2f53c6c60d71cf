import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** Cloud metadata services outside the link-local range: never a webhook target. */
const METADATA = ['100.100.100.200', 'fd00:ec2::254']

/** Ranges (as ipaddr.js names them) refused unless WEBHOOK_ALLOW_PRIVATE is on. */
const PRIVATE = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal'])

export class RefusedAddressError extends Error {}

function v4 (parts: number[]): ipaddr.IPv4 {
  return ipaddr.IPv4.parse(parts.join('.'))
}

/**
 * The IPv4 addresses an IPv6 address carries and reaches through a translator or tunnel:
 * IPv4-mapped and -translated, IPv4-compatible (`::a.b.c.d`), NAT64 (64:ff9b::/96), 6to4 and
 * Teredo (server and client). A refused IPv4 part refuses the IPv6 address.
 */
function embeddedIPv4 (ip: ipaddr.IPv6): ipaddr.IPv4[] {
  const b = ip.toByteArray()
  const range = ip.range()
  const last = b.slice(12, 16)
  const zeros = (n: number): boolean => b.slice(0, n).every((x) => x === 0)
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return [v4(last)]
  if (range === '6to4') return [v4(b.slice(2, 6))]
  if (range === 'teredo') return [v4(b.slice(4, 8)), v4(last.map((x) => x ^ 0xff))]
  if (zeros(12) && range !== 'unspecified' && range !== 'loopback') return [v4(last)]
  return []
}

function judge (ip: Address, shown: string, allowPrivate: boolean): string | null {
  const range = ip.range()
  if (METADATA.some((m) => ipaddr.parse(m).toNormalizedString() === ip.toNormalizedString())) {
    return `address ${shown} is a metadata service`
  }
  if (range === 'unicast') return null
  if (PRIVATE.has(range)) {
    return allowPrivate ? null : `address ${shown} is loopback or private (set WEBHOOK_ALLOW_PRIVATE=true to allow it)`
  }
  return `address ${shown} is link-local, unspecified, multicast, broadcast or reserved (${range})`
}

/**
 * Why an address may not be a webhook target, or null when it may. Only ordinary unicast
 * addresses pass (and loopback and private ones with `allowPrivate`); an IPv6 address that
 * embeds an IPv4 address is judged by that address too.
 */
export function refusal (address: string, allowPrivate: boolean): string | null {
  if (!ipaddr.isValid(address)) return `address ${address} is not an IP address`
  const ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv6') {
    const inner = embeddedIPv4(ip as ipaddr.IPv6)
    for (const part of inner) {
      const why = judge(part, `${address} (IPv4 ${part.toString()})`, allowPrivate)
      if (why !== null) return why
    }
    if (inner.length > 0) return null
  }
  return judge(ip, address, allowPrivate)
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

/** The promise, or a rejection as soon as the signal aborts (a DNS lookup cannot be cancelled). */
export async function abortable<T> (promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw new Error('aborted')
  return await new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
