// A terminal for Ink without one: a stdout of a given size that counts its writes and keeps the last frame
// (and when it came), and a stdin in raw mode that never has input. For the render benches.
import { EventEmitter } from 'node:events';

export class FakeStdout extends EventEmitter {
  writes = 0;
  last = '';
  lastAt = 0;
  constructor(columns, rows) {
    super();
    this.columns = columns;
    this.rows = rows;
  }
  write = (s) => {
    this.writes++;
    this.last = s;
    this.lastAt = performance.now();
    return true;
  };
}

export class FakeStdin extends EventEmitter {
  isTTY = true;
  read = () => null;
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
}
