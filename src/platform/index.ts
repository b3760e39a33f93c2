// Which OS hmm runs on, decided once, here (the only test of
// process.platform), and where it keeps its data there (SPEC "Files").
// What differs per OS lives beside this file: confine.ts picks how a command
// is confined (linux.ts: Landlock through the helper; darwin.ts: Seatbelt),
// clone.ts how a tree is cloned. Kept small: bare `hmm` (listing) loads it.
import {join, resolve} from 'node:path'
import {canonical, unique} from '../sandbox/paths.js'
import type {Platform} from '../sandbox/policy.js'
import {HmmError} from '../ui/errors.js'
import {homeDirectory} from '../ui/format.js'

/** The OS hmm runs on, if it is one hmm can confine a command on. */
const HOST: Platform | undefined = process.platform === 'linux' || process.platform === 'darwin' ? process.platform : undefined

/** The platform hmm runs on; refuses one where it has no sandbox. */
export function currentPlatform(): Platform {
  if (HOST) return HOST
  throw new HmmError(`the sandbox needs Linux (Landlock) or macOS (Seatbelt); ${process.platform} has neither`)
}

/** Whether hmm runs on `platform` (false anywhere it has no sandbox). */
export function runsOn(platform: Platform): boolean {
  return HOST === platform
}

/** The platform whose conventions apply where none was asked for: this one, Linux's where hmm has no sandbox. */
export function defaultPlatform(): Platform {
  return HOST ?? 'linux'
}

/**
 * Canonical (links resolved), decided once here: every path of a workspace
 * hmm hands the helper is made from it, and the helper follows no link on
 * the way to one (a home under a linked /home would otherwise leave an
 * agent's state and records unbound: attacker's review 5, F9).
 */
export function dataDir(env: NodeJS.ProcessEnv = process.env, platform = defaultPlatform()): string {
  return canonical(placesNamed(env, platform)[0])
}

/**
 * Every place the user's hmm data may be, the data directory first: those
 * HMM_HOME or XDG_DATA_HOME moved it from keep the workspaces made there
 * (the sandbox hides them all). Canonical, as dataDir.
 */
export function dataPlaces(env: NodeJS.ProcessEnv = process.env, platform = defaultPlatform()): string[] {
  return unique(placesNamed(env, platform).map(canonical))
}

/** The places of SPEC "Files", in the order they are chosen, as the environment names them. */
function placesNamed(env: NodeJS.ProcessEnv, platform: Platform): string[] {
  const home = env.HOME || homeDirectory()
  return [
    ...(env.HMM_HOME ? [env.HMM_HOME] : []),
    ...(env.XDG_DATA_HOME ? [join(resolve(env.XDG_DATA_HOME), 'hmm')] : []),
    platform === 'darwin' ? join(home, 'Library', 'Application Support', 'hmm') : join(home, '.local', 'share', 'hmm'),
  ]
}
