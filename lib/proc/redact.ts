/**
 * Secrets stay out of what relay writes. The values of secret-looking
 * variables in relay's own environment (ANTHROPIC_API_KEY, GH_TOKEN, …) are
 * replaced by `[redacted:<NAME>]` wherever relay writes text that leaves this
 * process: files committed to git (the report, briefs), the forge (PR body,
 * verdicts), relay's records and logs under `.git/relay/`, and its own output
 * (cron.log). Agents still get their environment: they need their API keys.
 * Only what relay writes is redacted.
 *
 * Built once per process from Deno.env, on first use; no imports, so the idle
 * tick pays nothing for it.
 */

/** Name parts that mark a variable as a secret. AUTH but not AUTHOR (GIT_AUTHOR_NAME). */
const SECRET_NAME =
  /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH(?!OR)|SESSION|COOKIE|PRIVATE/i;

/**
 * Well-known variables whose names look secret but whose values are paths or
 * addresses that appear in ordinary output; redacting them only garbles logs.
 */
const NOT_SECRET = new Set([
  "SSH_AUTH_SOCK",
  "DBUS_SESSION_BUS_ADDRESS",
  "SESSION_MANAGER",
  "DESKTOP_SESSION",
  "XDG_SESSION_CLASS",
  "XDG_SESSION_DESKTOP",
  "XDG_SESSION_ID",
  "XDG_SESSION_PATH",
  "XDG_SESSION_TYPE",
  "PASSWORD_STORE_DIR",
  "KEYTIMEOUT",
]);

/**
 * Shorter values are skipped: "1", "true" or "postgres" would redact words out
 * of every log, path and brief. A key or token is long and mixes kinds of
 * characters; a value of one kind only ("password", "localhost") is a word.
 */
export const MIN_SECRET_LENGTH = 12;

/** Letters only, digits only, or one case only with nothing else: a word, not a key. */
function wordLike(value: string): boolean {
  const kinds = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(value));
  return kinds.length < 2;
}

export interface Secret {
  name: string;
  value: string;
}

/** True for a variable name relay treats as a secret (see SECRET_NAME, NOT_SECRET). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) && !NOT_SECRET.has(name.toUpperCase());
}

/**
 * The secrets of an environment, longest value first (a value inside another
 * goes after it). A value that is the path of an existing file or folder
 * (GOOGLE_APPLICATION_CREDENTIALS, SSH_KEY_PATH) is where a secret lives, not
 * the secret, and redacting it would garble every record that names a path
 * under it (a repo inside it, say).
 */
export function secretsOf(
  env: Record<string, string>,
  isPath: (value: string) => boolean = existingPath,
): Secret[] {
  const seen = new Set<string>();
  const secrets: Secret[] = [];
  for (const name of Object.keys(env).sort()) {
    const value = env[name]!;
    if (
      !isSecretName(name) || value.trim().length < MIN_SECRET_LENGTH || wordLike(value) ||
      seen.has(value)
    ) {
      continue;
    }
    if (isPath(value)) continue;
    seen.add(value);
    secrets.push({ name, value });
  }
  return secrets.sort((a, b) => b.value.length - a.value.length);
}

function existingPath(value: string): boolean {
  if (!value.startsWith("/") && !value.startsWith("~")) return false;
  try {
    Deno.lstatSync(value);
    return true;
  } catch {
    return false;
  }
}

export class Redactor {
  readonly #secrets: readonly Secret[];
  readonly #longest: number;

  constructor(secrets: readonly Secret[]) {
    this.#secrets = secrets;
    this.#longest = secrets.reduce((n, s) => Math.max(n, s.value.length), 0);
  }

  /** Whether there is anything to redact (no secrets: text passes unchanged). */
  get active(): boolean {
    return this.#secrets.length > 0;
  }

  /** The names whose values are redacted, for messages. */
  get names(): string[] {
    return this.#secrets.map((s) => s.name);
  }

  /** `text` with every secret value replaced by `[redacted:<NAME>]`. */
  redact(text: string): string {
    let out = text;
    for (const { name, value } of this.#secrets) {
      if (out.includes(value)) out = out.split(value).join(`[redacted:${name}]`);
    }
    return out;
  }

  /** A copy of a JSON-like value with every string redacted (records, PR files). */
  redactDeep<T>(value: T): T {
    if (!this.active) return value;
    return this.#deep(value) as T;
  }

  #deep(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) return value.map((v) => this.#deep(v));
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.#deep(v);
      return out;
    }
    return value;
  }

  /**
   * Redaction for text that arrives in pieces (an agent's output): a secret
   * split across two pieces is still caught, because the tail of a piece that
   * could be the start of a secret is held back until the next piece shows.
   */
  stream(): RedactStream {
    let held = "";
    return {
      push: (text: string) => {
        if (!this.active) return text;
        const all = this.redact(held + text);
        const keep = this.#partialTail(all);
        held = all.slice(all.length - keep);
        return all.slice(0, all.length - keep);
      },
      end: () => {
        const rest = this.redact(held);
        held = "";
        return rest;
      },
    };
  }

  /** Length of the longest tail of `text` that is the start of (not all of) a secret value. */
  #partialTail(text: string): number {
    for (let k = Math.min(text.length, this.#longest - 1); k > 0; k--) {
      const tail = text.slice(text.length - k);
      if (this.#secrets.some((s) => s.value.length > k && s.value.startsWith(tail))) return k;
    }
    return 0;
  }
}

export interface RedactStream {
  /** What of `text` (with earlier held text) is safe to write now. */
  push(text: string): string;
  /** Whatever was held back, redacted: call once at the end. */
  end(): string;
}

/**
 * Copies a file an agent wrote into relay's records with the secrets of
 * relay's environment redacted (an agent may paste `env` into its report).
 * Byte for byte when there is nothing to redact.
 */
export async function copyRedacted(src: string, dest: string): Promise<void> {
  const data = await Deno.readFile(src);
  const r = redactor();
  const out = r.active ? new TextEncoder().encode(r.redact(new TextDecoder().decode(data))) : data;
  // Whole or not at all: a tick killed mid-copy must not leave half a report to be read later.
  const tmp = `${dest}.${Deno.pid}.tmp`;
  await Deno.writeFile(tmp, out);
  await Deno.rename(tmp, dest);
}

/** Rewrites a file an agent left in relay's records (a verdict) with relay's secrets redacted. */
export async function redactFile(path: string): Promise<void> {
  const r = redactor();
  if (!r.active) return;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  const clean = r.redact(text);
  if (clean === text) return;
  const tmp = `${path}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(tmp, clean);
  await Deno.rename(tmp, path);
}

let shared: Redactor | undefined;

/** The redactor for relay's own environment, built on first use. */
export function redactor(): Redactor {
  shared ??= new Redactor(secretsOf(readEnv()));
  return shared;
}

/** Forgets the redactor, so the next use reads the environment again (tests change it). */
export function resetRedactor(): void {
  shared = undefined;
}

/** `text` with the secrets of relay's environment redacted. */
export function redact(text: string): string {
  return redactor().redact(text);
}

function readEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    // Without the right to read the environment relay has no secrets of its own to leak.
    return {};
  }
}
