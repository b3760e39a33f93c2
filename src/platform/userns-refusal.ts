// Why this system refuses the command an unprivileged user namespace, and
// what changes that (SPEC "Sandbox": one line that says which and how to
// enable it). The helper's attempt (`hmm-helper layers`) says where it
// failed; the sysctls say why, and each cause has its own fix.
import {readFileSync, realpathSync} from 'node:fs'
import {HELPER_PATH} from '../native/helper.js'

/** A sysctl's value, or undefined where this kernel has none. */
function sysctl(name: string): string | undefined {
  try {
    return readFileSync(`/proc/sys/${name.replaceAll('.', '/')}`, 'utf8').trim()
  } catch {
    return undefined
  }
}

/** `text` as one argument to sh. */
const shQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * The AppArmor profile that lets the helper make user namespaces despite
 * Ubuntu's restriction, as Ubuntu ships for the programs that need them
 * (bwrap, chrome): no confinement by AppArmor but the right to `userns`,
 * attached by the helper's real path. The helper confines the command
 * itself (Landlock, seccomp, the namespaces).
 */
function apparmorProfile(helper: string): string[] {
  return ['abi <abi/4.0>,', 'include <tunables/global>', `profile hmm-helper "${helper}" flags=(unconfined) {`, '  userns,', '}']
}

/** The file the profile goes in. */
const PROFILE_FILE = '/etc/apparmor.d/hmm-helper'

/** A command that writes the profile for root and loads it. */
function writeProfile(): string {
  const lines = apparmorProfile(realpathSync(HELPER_PATH)).map(shQuoted).join(' ')
  return `printf '%s\\n' ${lines} | sudo tee ${PROFILE_FILE} >/dev/null && sudo apparmor_parser -r ${PROFILE_FILE}`
}

/**
 * What refuses user namespaces here (for "which this system refuses
 * (...)") and how to allow them, going by the helper's `refusal` and the
 * sysctls that refuse them.
 */
export function usernsRefusal(refusal: string): {cause: string; fix: string} {
  const limit = sysctl('user.max_user_namespaces')
  if (limit === '0') return {cause: 'user.max_user_namespaces is 0', fix: 'allow them: sudo sysctl -w user.max_user_namespaces=10000'}
  // ENOSPC with a limit above 0: this user has as many as it allows.
  if (refusal.endsWith('No space left on device')) {
    const more = Math.max(10000, 2 * Number(limit ?? 0))
    return {cause: `this user has as many as user.max_user_namespaces (${limit}) allows`, fix: `raise it: sudo sysctl -w user.max_user_namespaces=${more}`}
  }
  if (sysctl('kernel.apparmor_restrict_unprivileged_userns') === '1') {
    return {
      cause: "AppArmor's kernel.apparmor_restrict_unprivileged_userns is 1",
      fix: `allow them to hmm's helper with an AppArmor profile: ${writeProfile()} (or to every program: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)`,
    }
  }
  if (sysctl('kernel.unprivileged_userns_clone') === '0') {
    return {cause: 'kernel.unprivileged_userns_clone is 0', fix: 'allow them: sudo sysctl -w kernel.unprivileged_userns_clone=1'}
  }
  return {cause: `${refusal}; in a container, its seccomp profile may refuse them`, fix: 'allow unshare(CLONE_NEWUSER) to this user'}
}
