/**
 * Command-line options, parsed as node:util's parseArgs parses them with `strict: true` and
 * `allowPositionals: true`, for what relay's option tables use: string and boolean options, a
 * one-character `short`, `multiple`. Not node:util itself: loading any `node:` module costs a
 * Deno process ~15 ms at start-up, and every command parses its options.
 * tests/cli_options.test.ts runs both on the same argv and compares.
 */

/** One option, as in parseArgs's `options` (no `default`: relay's tables give none). */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** One character: `-q` for `--quiet`. */
  readonly short?: string;
  /** Every occurrence is kept, in an array; otherwise the last one wins. */
  readonly multiple?: boolean;
}

export type OptionTable = Readonly<Record<string, OptionSpec>>;

type One<O> = O extends { readonly type: "string" } ? string : boolean;
type Value<O> = O extends { readonly multiple: true } ? One<O>[] : One<O>;

/** The values parseArgs's own types give for `T`: each optional (absent when not given). */
export type OptionValues<T extends OptionTable> = {
  -readonly [K in keyof T]?: Value<T[K]>;
};

export interface ParsedOptions<T extends OptionTable> {
  values: OptionValues<T>;
  positionals: string[];
}

/**
 * Splits `args` into option values and positionals. Throws an Error naming the option for an
 * unknown option, a string option without its value, a boolean option given a value, and a
 * string option whose next argument looks like an option (`--reason --json`: a forgotten value;
 * `--reason=-x` gives one that starts with a dash). `--` ends the options; a lone `-` is a
 * positional; so is anything not starting with `-`. A negative number is an unknown short
 * option, as in parseArgs.
 */
export function parseOptions<T extends OptionTable>(
  args: readonly string[],
  options: T,
): ParsedOptions<T> {
  // Null prototype, as parseArgs: an option not given reads as undefined, even one named like an
  // Object.prototype member.
  const values: Record<string, unknown> = Object.create(null);
  const positionals: string[] = [];
  const spec = (name: string) => Object.hasOwn(options, name) ? options[name] : undefined;
  const isString = (name: string) => spec(name)?.type === "string";
  // parseArgs's lookup: a short letter no option claims stands for itself (and is then unknown,
  // unless some option's long name is that letter).
  const longOf = (short: string) =>
    Object.keys(options).find((name) => options[name]!.short === short) ?? short;

  /** `raw` is the option as written (`-q`, `--quiet`); `inline` is a value given after `=`. */
  const store = (name: string, raw: string, value: string | undefined, inline: boolean) => {
    const option = spec(name);
    if (!option) throw new Error(`Unknown option '${raw}'`);
    const both = `${option.short ? `-${option.short}, ` : ""}--${name}`;
    if (option.type === "string" && value === undefined) {
      throw new Error(`Option '${both} <value>' argument missing`);
    }
    if (option.type === "boolean" && value !== undefined) {
      throw new Error(`Option '${both}' does not take an argument`);
    }
    if (!inline && value !== undefined && value.length > 1 && value.startsWith("-")) {
      const example = raw.startsWith("--") ? `'${raw}=-XYZ'` : `'--${name}=-XYZ' or '${raw}-XYZ'`;
      throw new Error(
        `Option '${raw}' argument is ambiguous.\n` +
          `Did you forget to specify the option argument for '${raw}'?\n` +
          `To specify an option argument starting with a dash use ${example}.`,
      );
    }
    const stored = value ?? true;
    if (!option.multiple) values[name] = stored;
    else ((values[name] ??= []) as unknown[]).push(stored);
  };

  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.length < 2 || !arg.startsWith("-")) {
      positionals.push(arg);
    } else if (arg[1] !== "-") {
      // `-q`, a group `-qv`, or a short string option with its value joined on (`-fFILE`, also
      // at the end of a group: `-qfFILE`). A string option ends the group.
      for (let at = 1; at < arg.length; at++) {
        const short = arg[at]!;
        const name = longOf(short);
        if (!isString(name)) {
          store(name, `-${short}`, undefined, false);
        } else if (at + 1 < arg.length) {
          store(name, `-${short}`, arg.slice(at + 1), true);
          break;
        } else {
          const next = args[i + 1];
          if (next !== undefined) i++;
          store(name, `-${short}`, next, false);
        }
      }
    } else if (!arg.includes("=", 3)) {
      // `--name`, a string option's value in the next argument (whatever it looks like, then
      // checked above). `--=x` is an option named "=x", as in parseArgs.
      const name = arg.slice(2);
      const next = isString(name) ? args[i + 1] : undefined;
      if (next !== undefined) i++;
      store(name, arg, next, false);
    } else {
      // `--name=value`: the value may be empty or hold more `=`. parseArgs splits at the first
      // `=` (so `--=a=b` names the option "").
      const eq = arg.indexOf("=");
      const name = arg.slice(2, eq);
      store(name, `--${name}`, arg.slice(eq + 1), true);
    }
  }
  return { values: values as OptionValues<T>, positionals };
}
