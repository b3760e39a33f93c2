// Values that are a credential whatever the variable or setting holding
// them is called (SPEC "Sandbox"): a name filter misses a token kept under
// an innocuous name (NOTIFY=https://hooks.slack.com/...), so the command's
// environment is also judged by what each value holds.

/**
 * A URL with a login in it, in a variable of any name (DATABASE_URL,
 * PIP_INDEX_URL, a proxy's): `scheme://user:password@`, or for HTTP(S)
 * any `user@` (a token given as the user name, as GitHub takes it). A URL
 * with a user name only elsewhere (ssh://git@host, a database reached as
 * its user) carries no secret and stays: removing every *_URL would break
 * ordinary work.
 */
export function holdsLogin(value: string): boolean {
  for (const [, scheme, userinfo] of value.matchAll(URL_USERINFO)) {
    if (isLogin(scheme, userinfo)) return true
  }
  return false
}

/** A URL's scheme and user part (`https://user:pw@`). */
const URL_USERINFO = /([a-z][a-z0-9+.-]*):\/\/([^\s/?#@]+)@/gi

const isLogin = (scheme: string, userinfo: string) => userinfo.includes(':') || /^https?$/i.test(scheme)

/** The text with the user part taken out of each URL whose user part holdsLogin judges a login: the address stays. */
export function withoutLogins(text: string): string {
  return text.replace(URL_USERINFO, (whole, scheme: string, userinfo: string) => (isLogin(scheme, userinfo) ? `${scheme}://` : whole))
}

/**
 * A password (or a storage account's key) given as a field, non-empty:
 * in a connection string (ADO.NET's `Password=`, ODBC's `PWD=`, Azure's
 * `AccountKey=` and `SharedAccessKey=`, separated by `;`), a URL's query
 * (JDBC's `?password=`), or libpq's `key=value` list (separated by spaces).
 */
const PASSWORD_FIELD = /(^|[;?&\s])\s*(password|passwd|pwd|accountkey|sharedaccesskey)\s*=\s*[^\s;&]/i

/**
 * Tokens known by their shape, each as its issuer documents or prints it,
 * not glued to a longer word (`task-runner` holds no `sk-` token): GitHub's
 * (`ghp_` and its kin for OAuth, user-to-server, server and refresh tokens;
 * fine-grained `github_pat_`), GitLab's personal tokens (`glpat-`), Slack's
 * (`xoxb-`, `xoxp-`, ...), the API keys of OpenAI and Anthropic and the
 * many services that copy their form (`sk-`), Stripe's live keys
 * (`sk_live_`, `rk_live_`), and AWS access key IDs (`AKIA`, temporary
 * `ASIA`), which name the secret beside them.
 */
const TOKEN_SHAPES = [
  /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}/,
  /(?<![A-Za-z0-9])github_pat_\w{22,}/,
  /(?<![A-Za-z0-9])glpat-[\w-]{20,}/,
  /(?<![A-Za-z0-9])xox[a-z]-[A-Za-z0-9-]{10,}/,
  /(?<![A-Za-z0-9])sk-[\w-]{20,}/,
  /(?<![A-Za-z0-9])[rs]k_live_[A-Za-z0-9]{10,}/,
  /(?<![A-Za-z0-9])(AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/,
]

/** A webhook's URL is its secret: whoever has it posts as the hook. */
const WEBHOOK_URL = /https:\/\/(hooks\.slack\.com\/(services|workflows|triggers)\/|(ptb\.|canary\.)?discord(app)?\.com\/api\/webhooks\/)/i

/** A PEM block (a private key; certificates are rarely given as values, and a user keeps one with env.keep). */
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]+-----/

/** Whether `value` holds a credential by its shape alone. */
export function holdsCredential(value: string): boolean {
  return holdsLogin(value) || PASSWORD_FIELD.test(value) || WEBHOOK_URL.test(value) || PEM_BLOCK.test(value) || TOKEN_SHAPES.some(shape => shape.test(value))
}
