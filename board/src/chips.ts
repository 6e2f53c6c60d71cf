/**
 * A card's one line of chips (estimate, badges, labels, avatars), measured in characters of their
 * small type: a chip is shown whole or not at all, so none is ever cut mid-word. The widths are
 * estimates; the card checks the line in the page and gives back a label more when it still overflows.
 */

/** What a chip adds to the line beyond its text: its padding, border and the gap before it. */
export const CHIP = 3
/** The line of chips of a card in an 18rem column (wider columns, on a phone, have more). */
export const META_ROOM = 34
/** An assignee's avatar (they overlap). */
const AVATAR = 2

/** How much of the line the chips other than labels take. */
export function chipsWidth (texts: string[], assignees: number): number {
  return texts.reduce((n, text) => n + text.length + CHIP, 0) + (assignees > 0 ? CHIP + assignees * AVATAR : 0)
}

/**
 * The labels shown whole in `room`: all of them when they fit, else, in their order, each that fits
 * beside a last "+N" chip counting the others.
 */
export function fitLabels (names: string[], room: number): { shown: string[], more: string[] } {
  const cost = (name: string) => name.length + CHIP
  if (names.reduce((n, name) => n + cost(name), 0) <= room) return { shown: names, more: [] }
  let left = room - cost(`+${names.length}`)
  const shown: string[] = []
  const more: string[] = []
  for (const name of names) {
    if (cost(name) <= left) {
      shown.push(name)
      left -= cost(name)
    } else more.push(name)
  }
  return { shown, more }
}

/** `text` whole when it has at most `max` characters, else its first whole words and "…" (a first word longer than `max` stays whole). */
export function wholeWords (text: string, max: number): string {
  if (text.length <= max) return text
  const words = text.split(/\s+/).filter((w) => w !== '')
  let out = words[0] ?? ''
  for (const word of words.slice(1)) {
    if (out.length + 1 + word.length + 1 > max) break
    out += ` ${word}`
  }
  return `${out}…`
}
