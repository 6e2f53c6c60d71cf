// Server-Sent Events streams read as they arrive, for the live stream's tests.
import { get, type IncomingMessage } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

/** An open live stream read as it arrives: its status, headers and the events so far. */
export interface Live { res: IncomingMessage, events: Array<{ event: string, data: string }>, close: () => void, ended: Promise<string> }

export async function open (base: string, path: string, headers: Record<string, string> = {}): Promise<Live> {
  return await new Promise((resolve, reject) => {
    const req = get(base + path, { headers }, (res) => {
      let all = ''
      const ended = new Promise<string>((resolve) => { res.on('end', () => { resolve(all) }) })
      const live: Live = { res, events: [], close: () => { req.destroy() }, ended }
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        all += chunk
        text += chunk
        let end
        while ((end = text.indexOf('\n\n')) !== -1) {
          const block = text.slice(0, end)
          text = text.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          if (event !== undefined) live.events.push({ event, data: /^data: (.*)$/m.exec(block)?.[1] ?? '' })
        }
      })
      res.on('error', () => {})
      resolve(live)
    })
    req.on('error', reject)
  })
}

export async function waitFor (live: Live, event: string, count: number, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (live.events.filter((e) => e.event === event).length >= count) return true
    await sleep(25)
  }
  return false
}
