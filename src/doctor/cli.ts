/** `l20-setup doctor FILE|- [--json]`. */
import { FileRefusedError, readFileSafely, readStdinSafely } from '../util/read-file-safely.js';
import { doctorText } from './doctor.js';
import { renderDoctor } from './render.js';
import { escapeInvisible } from '../util/sanitize.js';

/**
 * Exit 0 for any input that could be read, whatever it holds (findings are the output, and a pasted
 * log is not a failed check); 2 only when the file cannot be read.
 */
export async function runDoctor(options: {
  file: string;
  json: boolean;
  color: boolean;
  write: (s: string) => void;
  error: (s: string) => void;
}): Promise<number> {
  let bytes: Buffer;
  try {
    const { file } = options;
    bytes = file === '-' ? await readStdinSafely('doctor input') : await readFileSafely(file, 'doctor input');
  } catch (err) {
    if (err instanceof FileRefusedError) {
      options.error(`l20-setup doctor: ${err.message}\n`);
      return 2;
    }
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    options.error(
      `l20-setup doctor: cannot read ${escapeInvisible(options.file)} (${code}); ` +
        'give a readable file, or - for standard input\n',
    );
    return 2;
  }
  const result = doctorText(bytes);
  options.write(options.json ? `${JSON.stringify(result.report, null, 2)}\n` : renderDoctor(result, options.color));
  return 0;
}
