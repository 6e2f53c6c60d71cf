import t from 'tap'
import { refusal } from '../delivery/address-policy.js'

t.test('refused without WEBHOOK_ALLOW_PRIVATE: embedded IPv4 forms, benchmark, multicast, broadcast', async (t) => {
  for (const address of [
    '::127.0.0.1', '::ffff:127.0.0.1', '::ffff:0:127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::7f00:1', '2002:a9fe:a9fe::', '2002:7f00:1::',
    '198.18.0.1', '224.0.0.1', '255.255.255.255', '0.0.0.0', '169.254.169.254', '100.100.100.200', 'fd00:ec2::254', '10.1.2.3',
    '192.168.1.1', '172.16.0.1', '100.64.0.1', '::1', 'fc00::1', 'fe80::1', 'ff02::1', '::', '240.0.0.1', '192.0.2.1', '2001:db8::1'
  ]) {
    t.type(refusal(address, false), 'string', `${address} refused`)
  }
})

t.test('refused even with private targets allowed', async (t) => {
  for (const address of ['64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::', '::ffff:169.254.169.254', '169.254.169.254', '198.18.0.1', '224.0.0.1', '255.255.255.255', '100.100.100.200', 'fe80::1']) {
    t.type(refusal(address, true), 'string', `${address} refused`)
  }
  t.match(refusal('64:ff9b::a9fe:a9fe', true), /169\.254\.169\.254/, 'the message names the embedded address')
})

t.test('public unicast and allowed private addresses pass', async (t) => {
  for (const address of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '2002:5db8:d822::1', '64:ff9b::5db8:d822']) {
    t.equal(refusal(address, false), null, `${address} allowed`)
  }
  for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', 'fd12::1']) {
    t.equal(refusal(address, true), null, `${address} allowed with private targets on`)
  }
})
