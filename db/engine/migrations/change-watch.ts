import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * PostgreSQL only: the change counter tells the instances watching it when it moves (a NOTIFY on
 * a channel named for the counter's table, so schemas sharing a database do not hear each other),
 * and keeps the list of those instances in its own row, so a write learns who must see it from
 * the row it bumps (README, "Scale out"). Each instance renews its place in `counter_listeners`,
 * with the backend of its listening session (ended when the instance lapses).
 */
export function changeWatchMigration (engine: Engine): Migration {
  return {
    async up (db: Kysely<unknown>) {
      if (engine !== 'postgres') return
      await sql.raw(`
        ALTER TABLE change_counter ADD COLUMN listeners text[] NOT NULL DEFAULT '{}';
        CREATE TABLE counter_listeners (id text PRIMARY KEY, renewed_at timestamptz NOT NULL, pid integer);
        CREATE FUNCTION planning_counter_moved() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify('planning_counter_' || TG_RELID, NEW.value::text);
          RETURN NULL;
        END $$;
        CREATE TRIGGER counter_moved AFTER UPDATE OF value ON change_counter
          FOR EACH ROW WHEN (OLD.value IS DISTINCT FROM NEW.value) EXECUTE FUNCTION planning_counter_moved();`).execute(db)
    }
  }
}
