/**
 * A real PostgreSQL for tests (the Debian package; `.ci/run` installs it):
 * `initdb` in a temp dir, `postgres` listening on 127.0.0.1 at a free port,
 * password authentication (scram) for every TCP connection. As root it runs
 * as the `postgres` user (PostgreSQL refuses to run as root).
 */
import postgres from "postgres";
import { freePort, waitForPort } from "./port.ts";

/** The newest installed server's bin dir, or null. */
function binDir(): string | null {
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")]
      .map((e) => e.name)
      .filter((n) => /^\d+$/.test(n))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const dir = `/usr/lib/postgresql/${v}/bin`;
      try {
        Deno.statSync(`${dir}/initdb`);
        return dir;
      } catch { /* next */ }
    }
  } catch { /* none */ }
  return null;
}

/** Why PostgreSQL tests cannot run here, or null when they can. */
export function postgresMissing(): string | null {
  return binDir()
    ? null
    : "PostgreSQL is not installed (apt-get install postgresql; .ci/run does it)";
}

/** A running server. */
export interface PostgresServer {
  /** `postgres://weir_admin:<password>@127.0.0.1:<port>/postgres` (superuser). */
  adminUrl: string;
  port: number;
  /** Make a login role with this password; returns its DSN. */
  close(): Promise<void>;
}

function run(cmd: string, args: string[], asUser: boolean) {
  const uid = Deno.uid();
  const full = uid === 0 && asUser
    ? ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", cmd, ...args]] as const
    : [cmd, args] as const;
  return new Deno.Command(full[0], {
    args: [...full[1]],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** initdb + start. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir();
  if (!bin) throw new Error(postgresMissing()!);
  const root = Deno.uid() === 0;
  const dir = await Deno.makeTempDir({ prefix: "weir-pg-" });
  const password = `pw-${crypto.randomUUID()}`;
  if (root) {
    const id = new TextDecoder().decode(
      (await new Deno.Command("id", { args: ["-u", "postgres"], stdout: "piped" }).output())
        .stdout,
    ).trim();
    const gid = new TextDecoder().decode(
      (await new Deno.Command("id", { args: ["-g", "postgres"], stdout: "piped" }).output())
        .stdout,
    ).trim();
    await Deno.chown(dir, Number(id), Number(gid));
  }
  await Deno.writeTextFile(`${dir}/pw`, password);
  if (root) await new Deno.Command("chown", { args: ["postgres:postgres", `${dir}/pw`] }).output();
  const init = await run(`${bin}/initdb`, [
    "-D",
    `${dir}/data`,
    "-U",
    "weir_admin",
    "--auth-host=scram-sha-256",
    "--auth-local=scram-sha-256",
    `--pwfile=${dir}/pw`,
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ], true).output();
  if (!init.success) {
    throw new Error(`initdb failed: ${new TextDecoder().decode(init.stderr)}`);
  }
  let child: Deno.ChildProcess | undefined;
  let port = 0;
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = freePort();
    const c = run(`${bin}/postgres`, [
      "-D",
      `${dir}/data`,
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "log_min_messages=fatal",
      "-c",
      "max_connections=40",
    ], true).spawn();
    c.stdout.cancel();
    let exited = false;
    c.status.then(() => exited = true);
    const up = await waitForPort(port, c, 200);
    // A listening port is not a ready server ("the database system is starting up"):
    // wait until pg_isready says it accepts connections.
    for (let i = 0; up && !exited && i < 400; i++) {
      const ready = await new Deno.Command(`${bin}/pg_isready`, {
        args: ["-h", "127.0.0.1", "-p", String(port), "-q"],
        stdout: "null",
        stderr: "null",
      }).output();
      if (ready.success) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (up && !exited) {
      c.stderr.cancel();
      child = c;
    } else {
      try {
        c.kill("SIGKILL");
      } catch { /* gone */ }
      await c.status;
      await c.stderr.cancel().catch(() => {});
    }
  }
  if (!child) throw new Error("postgres did not start");
  const proc = child;
  return {
    adminUrl: `postgres://weir_admin:${password}@127.0.0.1:${port}/postgres`,
    port,
    close: async () => {
      try {
        proc.kill("SIGINT"); // fast shutdown
      } catch { /* gone */ }
      const timer = setTimeout(() => {
        try {
          proc.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5_000);
      await proc.status;
      clearTimeout(timer);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** What {@link shopWithDblink} needs of a superuser connection (npm:postgres's `Sql`). */
interface AdminSql {
  unsafe(query: string): PromiseLike<unknown>;
}

/**
 * The database the sql read tests reach as weir would: the dblink extension,
 * a table `t` of three rows, and a login role `app` that may SELECT and
 * DELETE from it. Returns the role's libpq string (for dblink) and its DSN.
 */
export async function shopWithDblink(
  pg: PostgresServer,
  admin: AdminSql,
  password: string,
): Promise<{ libpq: string; dsn: string }> {
  await admin.unsafe(`CREATE EXTENSION dblink`);
  await admin.unsafe(`CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2), (3)`);
  await admin.unsafe(`CREATE ROLE app LOGIN PASSWORD '${password}'`);
  await admin.unsafe(`GRANT SELECT, DELETE ON t TO app`);
  return {
    libpq: `host=127.0.0.1 port=${pg.port} dbname=postgres user=app password=${password}`,
    dsn: `postgres://app:${password}@127.0.0.1:${pg.port}/postgres`,
  };
}

/**
 * A `Deno.test` against a fresh PostgreSQL ({@link startPostgres}), ignored
 * when none is installed ({@link postgresMissing}): `fn` gets the server and
 * an admin client of `adminMax` connections, both closed after it.
 */
export function postgresTest(
  name: string,
  fn: (pg: PostgresServer, admin: postgres.Sql) => Promise<void>,
  adminMax = 2,
): void {
  Deno.test({
    name,
    ignore: postgresMissing() !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const pg = await startPostgres();
      const admin = postgres(pg.adminUrl, { onnotice: () => {}, max: adminMax });
      try {
        await fn(pg, admin);
      } finally {
        await admin.end({ timeout: 1 }).catch(() => {});
        await pg.close();
      }
    },
  });
}
