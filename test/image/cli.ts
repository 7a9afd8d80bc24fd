// `npm run image:build`: progress and figures on stderr, the pushed image reference as the last
// line of stdout, so `IMAGE=$(npm run -s image:build | tail -1)` works.
import { InstallerError } from '../../src/common/errors.js';
import { buildImage } from './image-build.js';

const log = (line: string) => process.stderr.write(`[image] ${line}\n`);

buildImage({ log }).then(
  (built) => {
    const s = built.seconds;
    log(
      `${built.imageId.slice(0, 19)}: ${(built.bytes.uncompressed / 1e6).toFixed(1)} MB (${(built.bytes.compressed / 1e6).toFixed(1)} MB compressed); base ${s.base.toFixed(1)} s, build ${s.build.toFixed(1)} s, push ${s.push.toFixed(1)} s`,
    );
    process.stdout.write(`${built.reference}\n`);
  },
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    // A chart the installer would refuse (exit 3, e.g. a dependency not vendored): its next step too.
    if (error instanceof InstallerError && error.hint) log(`next: ${error.hint}`);
    process.exitCode = error instanceof InstallerError ? error.exitCode : 1;
  },
);
