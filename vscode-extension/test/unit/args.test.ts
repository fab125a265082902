import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import pkg from '../../package.json' with { type: 'json' };
import { argsSetting, joinArgs, promptValue, rememberArgs, runFileArguments, splitArgs } from '../../src/args';

function words(text: string): string[] {
  const r = splitArgs(text);
  assert.ok(r.ok, `${text}: ${r.ok ? '' : r.error}`);
  return r.args;
}

describe('splitting the prompt into arguments, as a shell would', () => {
  it('splits on blanks', () => {
    assert.deepEqual(words('--lr 1e-3 --steps 10'), ['--lr', '1e-3', '--steps', '10']);
    assert.deepEqual(words('  --lr\t1e-3\n  '), ['--lr', '1e-3']);
    assert.deepEqual(words(''), []);
    assert.deepEqual(words('   '), []);
  });
  it('keeps quoted text together', () => {
    assert.deepEqual(words(`--name 'my run' --note "a \\"b\\" c"`), ['--name', 'my run', '--note', 'a "b" c']);
    assert.deepEqual(words(`--x=' a'"b "c`), ['--x= ab c']);
    assert.deepEqual(words(`'' ""`), ['', '']);
    assert.deepEqual(words(`'$HOME \\n'`), ['$HOME \\n']); // single quotes: all literal
    assert.deepEqual(words(`"\\$HOME \\n"`), ['$HOME \\n']); // double: only \\ \" \$ \` escape
  });
  it('lets a backslash escape outside quotes', () => {
    assert.deepEqual(words('a\\ b c\\\\d'), ['a b', 'c\\d']);
    assert.deepEqual(words('a\\'), ['a\\']);
  });
  it('reports an unclosed quote', () => {
    assert.deepEqual(splitArgs(`--name 'oops`), { ok: false, error: "a quote (') at column 8 is not closed" });
    assert.deepEqual(splitArgs('"oops'), { ok: false, error: 'a quote (") at column 1 is not closed' });
  });
  it('agrees with a real shell', () => {
    if (!fs.existsSync('/bin/sh')) {
      return;
    }
    for (const line of [`--lr 1e-3 --name 'my run'`, `"a \\"q\\"" b\\ c 'it'\\''s'`, `x=" y " '' --`]) {
      const out = execFileSync('/bin/sh', ['-c', `for a in ${line}; do printf '%s\\0' "$a"; done`], { encoding: 'utf8' });
      assert.deepEqual(words(line), out.split('\0').slice(0, -1), line);
    }
  });
  it('joins words back into a line that splits the same', () => {
    for (const ws of [['--lr', '1e-3'], ['two words', "it's", '', 'a"b', '$x', 'back\\slash'], []]) {
      assert.deepEqual(words(joinArgs(ws)), ws);
    }
    assert.equal(joinArgs(['--lr', '1e-3', '--name', 'a b']), "--lr 1e-3 --name 'a b'");
  });
});

describe('the quiver.run.args setting', () => {
  it('takes a list of strings', () => {
    assert.deepEqual(argsSetting(['--steps', '10']), { args: ['--steps', '10'] });
    assert.deepEqual(argsSetting(undefined), { args: [] });
    assert.deepEqual(argsSetting(null), { args: [] });
    assert.deepEqual(argsSetting([]), { args: [] });
  });
  it('says what is wrong with anything else, and runs without arguments', () => {
    for (const bad of ['--steps 10', ['--steps', 10], { steps: 10 }]) {
      const r = argsSetting(bad);
      assert.deepEqual(r.args, []);
      assert.match(r.problem ?? '', /^quiver\.run\.args must be a list of strings/);
    }
  });
  it('is declared resource-scoped in package.json, with the timeout that defaults to none', () => {
    const props = pkg.contributes.configuration.properties as Record<string, Record<string, unknown>>;
    assert.deepEqual(
      { type: props['quiver.run.args'].type, items: props['quiver.run.args'].items, scope: props['quiver.run.args'].scope, default: props['quiver.run.args'].default },
      { type: 'array', items: { type: 'string' }, scope: 'resource', default: [] },
    );
    assert.equal(props['quiver.run.timeoutSeconds'].default, null);
    assert.equal(props['quiver.run.timeoutSeconds'].minimum, 0);
  });
  it('declares the commands', () => {
    const titles = Object.fromEntries(pkg.contributes.commands.map((c) => [c.command, c.title]));
    assert.equal(titles['quiver.client.runFileWithArgs'], 'Run File with Arguments…');
    assert.equal(titles['quiver.client.showMetrics'], 'Show Run Metrics');
  });
});

describe('the run request and the prompt', () => {
  it('sends the arguments after the URI', () => {
    assert.deepEqual(runFileArguments('file:///a.qv', ['--lr', '1']), ['file:///a.qv', { args: ['--lr', '1'] }]);
    assert.deepEqual(runFileArguments('file:///a.qv', []), ['file:///a.qv', { args: [] }]);
  });
  it('starts from the last arguments of the file, else the setting', () => {
    assert.equal(promptValue(['--steps', '5'], ['--steps', '1']), '--steps 5');
    assert.equal(promptValue(undefined, ['--name', 'a b']), "--name 'a b'");
    assert.equal(promptValue([], ['--steps', '1']), ''); // the last run had none
  });
  it('remembers the last arguments per file, a bounded number of files', () => {
    let state: Record<string, string[]> = rememberArgs(undefined, 'file:///a.qv', ['--x', '1']);
    state = rememberArgs(state, 'file:///b.qv', []);
    state = rememberArgs(state, 'file:///a.qv', ['--x', '2']);
    assert.deepEqual({ ...state }, { 'file:///b.qv': [], 'file:///a.qv': ['--x', '2'] });
    for (let i = 0; i < 150; i++) {
      state = rememberArgs(state, `file:///f${i}.qv`, [String(i)]);
    }
    assert.equal(Object.keys(state).length, 100);
    assert.deepEqual(state['file:///f149.qv'], ['149']);
    assert.equal(state['file:///a.qv'], undefined);
  });
});
