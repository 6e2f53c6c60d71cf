/**
 * Tests that do not depend on the pass they run in (the binary, PostgreSQL and Redis outages, two
 * instances, the browser) run once per CI run: CI's later passes set PLANNING_ONCE_TESTS=skip
 * (docs/development.md, "CI").
 */
export const ranOnce: string | false = process.env.PLANNING_ONCE_TESTS === 'skip'
  ? 'runs once per CI run, in its first pass (PLANNING_ONCE_TESTS=skip)'
  : false
