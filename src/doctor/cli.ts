/** `l20-setup doctor FILE|- [--json]`. */
import { readFile } from 'node:fs/promises';
import { doctorText } from './doctor.js';
import { renderDoctor } from './render.js';

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** 0 nothing high or worse (also for unknown input), 1 a blocker or high finding, 2 the file cannot be read. */
export async function runDoctor(options: { file: string; json: boolean; color: boolean; write: (s: string) => void; error: (s: string) => void }): Promise<number> {
  let bytes: Buffer;
  try {
    bytes = options.file === '-' ? await readStdin() : await readFile(options.file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    options.error(`l20-setup doctor: cannot read ${options.file} (${code}); give a readable file, or - for standard input\n`);
    return 2;
  }
  const result = doctorText(bytes);
  options.write(options.json ? `${JSON.stringify(result.report, null, 2)}\n` : renderDoctor(result, options.color));
  return result.report.findings.some((f) => f.severity === 'blocker' || f.severity === 'high') ? 1 : 0;
}
