/**
 * The git commit this copy of weir was built from. Empty in the repository;
 * the release workflow writes the tagged commit here (`scripts/stamp.ts`)
 * before it compiles the binaries, builds the image and publishes to JSR.
 *
 * @module
 */

/** The full commit hash, or "" when this copy was not built by the release. */
export const COMMIT: string = "";
