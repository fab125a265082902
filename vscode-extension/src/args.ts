// Arguments of a program's `main` for Run File: the quiver.run.args setting, and
// the words typed in "Run File with Arguments…", split as a POSIX shell would
// split them (no expansion of variables, globs or `~`). Pure.

export type SplitResult = { ok: true; args: string[] } | { ok: false; error: string };

/**
 * Splits `text` into words like a shell: blanks separate words; '…' keeps
 * everything literally; "…" keeps everything but lets a backslash escape
 * `"`, `\`, `$` and `` ` ``; outside quotes a backslash escapes the next
 * character. `''` is an empty word. An unterminated quote is an error.
 */
export function splitArgs(text: string): SplitResult {
  const args: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) {
        args.push(word);
        word = '';
        inWord = false;
      }
      i += 1;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) {
        return { ok: false, error: `a quote (') at column ${i + 1} is not closed` };
      }
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (;;) {
        if (j >= text.length) {
          return { ok: false, error: `a quote (") at column ${i + 1} is not closed` };
        }
        const d = text[j];
        if (d === '"') {
          break;
        }
        if (d === '\\' && j + 1 < text.length && '"\\$`'.includes(text[j + 1])) {
          word += text[j + 1];
          j += 2;
        } else {
          word += d;
          j += 1;
        }
      }
      inWord = true;
      i = j + 1;
    } else if (c === '\\') {
      if (i + 1 < text.length) {
        if (text[i + 1] !== '\n') {
          word += text[i + 1];
          inWord = true;
        }
        i += 2;
      } else {
        word += '\\';
        inWord = true;
        i += 1;
      }
    } else {
      word += c;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) {
    args.push(word);
  }
  return { ok: true, args };
}

const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** The words as one line that `splitArgs` splits back into the same words. */
export function joinArgs(args: readonly string[]): string {
  return args.map((a) => (PLAIN.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The quiver.run.args setting's value as words; anything but an array of strings is a problem. */
export function argsSetting(value: unknown): { args: string[]; problem?: string } {
  if (value === undefined || value === null) {
    return { args: [] };
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return { args: [...value] };
  }
  return {
    args: [],
    problem: `quiver.run.args must be a list of strings (e.g. ["--lr", "1e-3"]), found ${JSON.stringify(value)}; running without arguments`,
  };
}

/**
 * The arguments of quiver.runFile: the document's URI, then `{args}` for its `main`.
 */
export function runFileArguments(uri: string, args: readonly string[]): [string, { args: string[] }] {
  return [uri, { args: [...args] }];
}

const MAX_REMEMBERED = 100;

/** The state object stored under one key: file URI -> words, the most recent last. */
export function rememberArgs(state: Record<string, string[]> | undefined, uri: string, args: string[]): Record<string, string[]> {
  const next: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(state ?? {})) {
    if (k !== uri && Array.isArray(v)) {
      next[k] = v;
    }
  }
  next[uri] = [...args];
  const keys = Object.keys(next);
  for (const k of keys.slice(0, Math.max(0, keys.length - MAX_REMEMBERED))) {
    delete next[k];
  }
  return next;
}

/** What the prompt starts with: the last words used for the file, else the setting's. */
export function promptValue(remembered: string[] | undefined, setting: string[]): string {
  return joinArgs(remembered ?? setting);
}
