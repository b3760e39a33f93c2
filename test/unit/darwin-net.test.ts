// The Seatbelt form of --net (SPEC "Network"), checked on the generated
// profile text as there is no Mac here: with none, IP traffic only to and
// from localhost; with the proxy, out only to its port; in both, the name
// resolver out of reach; and every other rule as without --net.
import {describe, expect, it} from 'vitest'
import {seatbelt, seatbeltArgv} from '../../src/platform/darwin.js'
import type {SandboxPolicy} from '../../src/sandbox/policy.js'
import {head, parse, type Sexpr} from './sexpr.js'

const MAC: SandboxPolicy = {
  tree: '/Users/me/Library/Application Support/hmm/k3xq9a/tree/proj',
  readable: ['/'],
  writable: ['/private/tmp', '/Users/me/.cache'],
  readOnly: [],
  plainOnly: [],
  devices: ['/dev'],
  hidden: ['/Users/me/.ssh', '/Users/me/Library/Application Support/hmm'],
}

type List = Sexpr & {kind: 'list'}

/** The rules, each on one line, as `(deny network-outbound (remote ip "*:*"))`. */
function allRules(profile: string): string[] {
  const show = (item: Sexpr): string =>
    item.kind === 'symbol' ? item.name : item.kind === 'string' ? JSON.stringify(item.value) : `(${item.items.map(show).join(' ')})`
  return parse(profile)
    .filter((form): form is List => form.kind === 'list' && ['allow', 'deny'].includes(head(form) ?? ''))
    .map(show)
}

/** The rules of the network by address, and the resolver's service. */
function networkRules(profile: string): string[] {
  return allRules(profile).filter(rule => /network|mach-lookup/.test(rule) && !rule.includes('unix-socket'))
}

const NONE = [
  '(deny network-outbound (remote ip "*:*"))',
  '(allow network-outbound (remote ip "localhost:*"))',
  '(deny network-bind network-inbound (local ip "*:*"))',
  '(allow network-bind network-inbound (local ip "localhost:*"))',
  '(deny mach-lookup (global-name "com.apple.dnssd.service"))',
]

describe('the Seatbelt profile with --net', () => {
  it('none: IP only to and from localhost, no name resolver', () => {
    const {profile, parameters} = seatbelt({...MAC, network: {kind: 'none'}}, {tiocsti: true})
    expect(networkRules(profile)).toEqual(NONE)
    expect(parameters.filter(({name}) => name.startsWith('SYSTEM_SOCKET'))).toEqual([{name: 'SYSTEM_SOCKET_0', value: '/private/var/run/syslog'}])
  })

  it("HOST,...: out only to the proxy's port, which is the one number in the text", () => {
    const {profile} = seatbelt({...MAC, network: {kind: 'proxy', hosts: ['example.com']}}, {tiocsti: true, proxyPort: 49152})
    expect(networkRules(profile)).toEqual([NONE[0], '(allow network-outbound (remote ip "localhost:49152"))', ...NONE.slice(2)])
    // The hosts are the proxy's business, never the profile's.
    expect(profile).not.toContain('example.com')
    const argv = seatbeltArgv({...MAC, network: {kind: 'proxy', hosts: ['example.com']}}, ['claude'], 49152)
    expect(argv[2]).toContain('(allow network-outbound (remote ip "localhost:49152"))')
  })

  it('without --net changes nothing: no IP rule, the resolver reachable', () => {
    const {profile, parameters} = seatbelt(MAC, {tiocsti: true})
    expect(networkRules(profile)).toEqual([])
    expect(parameters.map(({value}) => value)).toContain('/private/var/run/mDNSResponder')
    // The rest is the same, but for the resolver's socket.
    const none = allRules(seatbelt({...MAC, network: {kind: 'none'}}, {tiocsti: true}).profile).filter(rule => !NONE.includes(rule))
    expect(none).toEqual(allRules(profile).map(rule => rule.replace(' (remote unix-socket (path-literal (param "SYSTEM_SOCKET_1")))', '')))
  })
})
