import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pkg from '../../package.json' with { type: 'json' };
import { DEBUG_TYPE, debugpyLaunch } from '../../src/debugLaunch';

describe('the quiver debug type as a debugpy launch', () => {
  it('runs quiver.cli debug FILE with main arguments after --', () => {
    const got = debugpyLaunch(
      { type: 'quiver', request: 'launch', name: 'Debug t', program: '/w/t.qv', args: ['--lr', '1e-3'], breakOnNaN: true },
      '/w/.venv/bin/python',
    );
    assert.equal(got.module, 'quiver.cli');
    assert.deepEqual(got.args, ['debug', '/w/t.qv', '--break-on-nan', '--', '--lr', '1e-3']);
    assert.deepEqual(got.python, ['/w/.venv/bin/python']);
    assert.equal(got.cwd, '/w');
    assert.equal(got.justMyCode, true);
    assert.deepEqual(got.rules, [{ module: 'quiver', include: false }]);
    // debugpy refuses program together with module: the .qv file is only an argument
    assert.equal('program' in got, false);
    assert.equal('breakOnNaN' in got, false);
  });

  it('leaves out -- and --break-on-nan when there is nothing to pass', () => {
    const got = debugpyLaunch({ type: 'quiver', request: 'launch', name: 'n', program: '/w/t.qv', cwd: '/elsewhere' }, 'python3');
    assert.deepEqual(got.args, ['debug', '/w/t.qv']);
    assert.equal(got.cwd, '/elsewhere');
  });

  it('is contributed: the debugger, .qv breakpoints and the Debug Quiver File command', () => {
    const c = pkg.contributes as Record<string, unknown> & { debuggers: { type: string }[]; breakpoints: { language: string }[]; commands: { command: string }[] };
    assert.ok(c.debuggers.some((d) => d.type === DEBUG_TYPE));
    assert.deepEqual(c.breakpoints, [{ language: 'quiver' }]);
    assert.ok(c.commands.some((x) => x.command === 'quiver.client.debugFile'));
  });
});
