/** A sliding window of send times per user: at most `max` sends per `windowMs`. */
export class SendLimiter {
  private readonly sends = new Map<number, number[]>()

  constructor (readonly max: number, readonly windowMs: number) {}

  /** Records a send and returns 0, or returns the milliseconds to wait when over the limit. */
  take (userId: number, now = Date.now()): number {
    const recent = (this.sends.get(userId) ?? []).filter((at) => at > now - this.windowMs)
    if (recent.length >= this.max) {
      this.sends.set(userId, recent)
      return recent[0] + this.windowMs - now
    }
    recent.push(now)
    this.sends.set(userId, recent)
    return 0
  }
}
