import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * PostgreSQL only: a write says what it reached (the repositories it was confined to and the
 * issues whose board rows it changed) in the counter's row as it bumps it, prefixed with the value
 * it leaves, and a trigger sends that on a channel of its own, before the counter's own
 * notification (triggers of one event fire in their names' order). Other instances then keep
 * their boards and cached answers across the write as the writer does (README, "Scale out"). The
 * trigger fires only for an update that sets the reach with the value: a bump that does not say (a
 * statement of its own, an older instance) sends nothing, and instances that do not listen on the
 * new channel hear the counter as before.
 */
export function writeReachMigration (engine: Engine): Migration {
  return {
    async up (db: Kysely<unknown>) {
      if (engine !== 'postgres') return
      await sql.raw(`
        ALTER TABLE change_counter ADD COLUMN reach text;
        CREATE FUNCTION planning_counter_reached() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify('planning_reach_' || TG_RELID, NEW.reach);
          RETURN NULL;
        END $$;
        CREATE TRIGGER counter_in_reach AFTER UPDATE OF reach ON change_counter
          FOR EACH ROW WHEN (OLD.value IS DISTINCT FROM NEW.value AND length(NEW.reach) < 7900 AND split_part(NEW.reach, ' ', 1) = NEW.value::text)
          EXECUTE FUNCTION planning_counter_reached();`).execute(db)
    }
  }
}
