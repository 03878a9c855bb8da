/**
 * The App in a terminal of a given size (ink-testing-library's has 100 columns and no rows), in Ink's
 * debug mode: every render writes the whole frame, unthrottled.
 */
import { EventEmitter } from 'node:events';
import { render as inkRender } from 'ink';
import { App } from '../../screens/App.js';
import { Providers } from '../../screens/store-context.js';
import type { AppStore } from '../../screens/state/app-store.js';
import type { Controller } from '../../src/engine/controller.js';

class FakeStdout extends EventEmitter {
  last = '';
  writes = 0;
  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    super();
  }
  write = (frame: string): boolean => {
    this.last = frame;
    this.writes++;
    return true;
  };
}

class FakeStdin extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  write(data: string): void {
    this.data = data;
    this.emit('readable');
    this.emit('data', data);
  }
  read = (): string | null => {
    const d = this.data;
    this.data = null;
    return d;
  };
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
}

/** The App in a terminal of `columns` × `rows`, every render written whole (Ink's debug mode). */
export function mountSized(store: AppStore, c: Controller, size: { columns: number; rows: number }) {
  const stdout = new FakeStdout(size.columns, size.rows);
  const stdin = new FakeStdin();
  const instance = inkRender(
    <Providers store={store} controller={c}>
      <App />
    </Providers>,
    {
      stdout: stdout as never,
      stderr: new FakeStdout(80, 24) as never,
      stdin: stdin as never,
      debug: true,
      exitOnCtrlC: false,
      patchConsole: false,
    },
  );
  return { lastFrame: () => stdout.last, writes: () => stdout.writes, stdin, unmount: () => instance.unmount() };
}

export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}
