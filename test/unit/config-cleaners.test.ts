// The package managers' cleaned copies (app/config-cleaners.ts): the
// spellings each format allows for a login, none of which may survive.
import {describe, expect, it} from 'vitest'
import {cleanCargoConfig, cleanMavenSettings, cleanPipConf, cleanYarnrc, cleanYarnrcYml} from '../../src/app/config-cleaners.js'

const leaks = (text: string | undefined) => text?.match(/LEAK\w*/g) ?? []

describe('yarn', () => {
  it("berry's logins in flow maps go, the settings stay", () => {
    const out = cleanYarnrcYml(
      'npmRegistryServer: "https://r.example"\nnpmScopes: { acme: { npmRegistryServer: "https://npm.acme.example", npmAuthToken: LEAK_B1 } }\n' +
        'npmRegistries:\n  "https://r2.example": {npmAuthIdent: "bob:LEAK_B2"}\nenableTelemetry: false\n',
    )
    expect(leaks(out)).toEqual([])
    expect(out).toContain('npmRegistryServer: "https://r.example"\n')
    expect(out).toContain('enableTelemetry: false\n')
  })

  it("1's `key: value` logins go", () => {
    const out = cleanYarnrc('registry "https://r.example/"\n_auth: LEAK_Y1\n"//r.example/:_password": LEAK_Y2\n_authToken:LEAK_Y3\n')
    expect(out).toBe('registry "https://r.example/"\n')
  })
})

describe('pip', () => {
  it('an index whose path holds a token loses its line; one without stays', () => {
    const out = cleanPipConf(
      '[global]\nindex-url = https://pypi.org/simple\nextra-index-url = https://dl.cloudsmith.io/LEAK_P1_entitlement/acme/py/python/simple/\n    https://dl.cloudsmith.io/public/acme/py/python/simple/\n    https://pypi.example/LEAK1aB3xZ9qP0wE7rT2/acme/\n' +
        '    https://pypi.fury.io/LEAKfuryTok3nAbCdEf12/acme/\n    https://packagecloud.io/acme/repo/pypi/simple\ntimeout = 60\n',
    )
    expect(leaks(out)).toEqual([])
    expect(out).toContain('index-url = https://pypi.org/simple\n')
    expect(out).toContain('https://packagecloud.io/acme/repo/pypi/simple\n')
    expect(out).toContain('https://dl.cloudsmith.io/public/acme/py/python/simple/\n')
    expect(out).toContain('timeout = 60\n')
  })
})

describe('cargo', () => {
  it('multi-line strings and quoted keys in inline tables go: a table that holds them goes whole', () => {
    const out = cleanCargoConfig(
      '[build]\njobs = 2\n[registry]\ntoken = """\nLEAK_C1"""\n[registries.acme]\nindex = "sparse+https://cargo.acme.example/"\ntoken = \'\'\'\nLEAK_C2\n\'\'\'\n' +
        '[registries]\nother = { index = "sparse+https://o.example/", "token" = "LEAK_C3" }\nthird = { index = "sparse+https://t.example/", token = "Bearer \\" LEAK_C4" }\n' +
        '[alias]\nhi = "version"\n',
    )
    expect(leaks(out)).toEqual([])
    expect(out).toContain('[build]\njobs = 2\n')
    expect(out).toContain('[alias]\nhi = "version"\n')
  })

  it('keeps a registry table without a login as it is', () => {
    const text = '[registries.work]\nindex = "sparse+https://cargo.work.example/index/"\n[net]\ngit-fetch-with-cli = true\n'
    expect(cleanCargoConfig(text)).toBe(text)
  })

  it('a file TOML cannot read is not shown', () => {
    expect(cleanCargoConfig('[registry\ntoken = "LEAK"\n')).toBeUndefined()
  })
})

describe('maven', () => {
  it("properties with a credential's name and DTD entities go", () => {
    const out = cleanMavenSettings(
      '<?xml version="1.0"?>\n<!DOCTYPE settings [ <!ENTITY pw "LEAK_M1"> ]>\n<settings>\n  <servers>\n' +
        '    <server><id>b</id><username>bob</username><password>&pw;</password></server>\n  </servers>\n' +
        '  <profiles><profile><id>p</id><properties>\n    <gpg.passphrase>LEAK_M2</gpg.passphrase>\n    <sonar.login>LEAK_M3</sonar.login>\n' +
        '    <github.token>LEAK_M4</github.token>\n    <java.version>17</java.version>\n  </properties></profile></profiles>\n</settings>\n',
    )
    expect(leaks(out)).toEqual([])
    expect(out).not.toContain('ENTITY')
    expect(out).toContain('<server><id>b</id><username>bob</username></server>')
    expect(out).toContain('<java.version>17</java.version>')
  })

  it('a property named like a credential goes, others stay', () => {
    const out = cleanMavenSettings(
      '<settings><profiles><profile><properties/><configuration>\n  <property><name>github.token</name><value>LEAK_P</value></property>\n' +
        '  <property><name>color</name><value>blue</value></property>\n</configuration></profile></profiles></settings>\n',
    )
    expect(leaks(out)).toEqual([])
    expect(out).toContain('<property><name>color</name><value>blue</value></property>')
  })
})
