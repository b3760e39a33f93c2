// Tools' checks for a newer version of themselves, turned off in the
// sandbox (SPEC "Sandbox"; issue 24): the notice is noise in an agent's
// output, and a check that keeps its state under ~/.config, which the
// command may not write, fails loudly on every run (update-notifier's
// "Try running with sudo ... sudo chown -R $USER ~/.config"), which an
// agent takes as an instruction. Each variable is the tool's own switch;
// a value the user set, in any case of its name, stays.

/** The switches, each with the tools it silences. */
export const UPDATE_CHECKS_OFF: Record<string, string> = {
  // update-notifier, the package many Node CLIs use (ava, xo, ...): set, it neither checks nor opens its store in ~/.config/configstore.
  NO_UPDATE_NOTIFIER: '1',
  // npm's "New major version of npm available!" (pnpm reads the same setting).
  NPM_CONFIG_UPDATE_NOTIFIER: 'false',
  // Yarn 1's check for a newer yarn (its disable-self-update-check, which it reads from YARN_* variables).
  YARN_DISABLE_SELF_UPDATE_CHECK: 'true',
  // pip's "A new release of pip is available".
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
  // The GitHub CLI's notices of a newer gh and of newer extensions.
  GH_NO_UPDATE_NOTIFIER: '1',
  GH_NO_EXTENSION_UPDATE_NOTIFIER: '1',
  // Deno's check for a newer deno.
  DENO_NO_UPDATE_CHECK: '1',
  // HashiCorp's checkpoint (terraform, packer, vagrant): "Your version of Terraform is out of date!".
  CHECKPOINT_DISABLE: '1',
}

/**
 * The switches `base` does not set under any case of their names (npm
 * reads `npm_config_update_notifier` in any case), less those `dropped`
 * (the config file's env.remove) names.
 */
export function updateChecksOff(base: NodeJS.ProcessEnv, dropped: (name: string) => boolean): Record<string, string> {
  const set = new Set(Object.keys(base).map(name => name.toUpperCase()))
  return Object.fromEntries(Object.entries(UPDATE_CHECKS_OFF).filter(([name]) => !set.has(name) && !dropped(name)))
}
