// The cleaning of start-up files (app/startup-files.ts): a statement that
// sets or holds a credential goes whole, every line of it a comment, so a
// value over several lines, a continuation or a heredoc's body is not read.
import {describe, expect, it} from 'vitest'
import {withoutCredentialLines, withoutCredentialSettings} from '../../src/app/startup-files.js'

const cleaned = (text: string) => withoutCredentialLines(text) ?? text

describe('a shell start-up file', () => {
  it.each([
    ['a value over several lines', 'export SSH_PRIVATE_KEY="-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETbody\n-----END OPENSSH PRIVATE KEY-----"\n'],
    ['a single-quoted value over several lines', "export DB_PASSWORD='first\nSECRETsecond'\n"],
    ['export -n', 'export -n NPM_TOKEN=SECRETnpm\n'],
    ['a second assignment', 'export EDITOR=vim OPENAI_API_KEY=SECRETsecond\n'],
    ['a continuation', 'export AWS_SECRET_ACCESS_KEY=\\\nSECRETcontinued\n'],
    ['a heredoc', 'cat > /tmp/.netrc <<NETRC\nmachine api.example.com login bob password SECRETheredoc\nNETRC\n'],
    ['a quoted heredoc with <<-', "cat > f <<-'EOF'\n\ttoken: SECRETdash\n\tEOF\n"],
    ['a default assignment', ': ${ANTHROPIC_API_KEY:=SECRETdefault}\n'],
    ['an alias', "alias deploy='HEROKU_API_KEY=SECRETalias heroku'\n"],
    ['an append', 'export GH_TOKEN+=SECRETappend\n'],
    ['an array', 'declare -A tokens=([gitlab]=SECRETarray)\n'],
    ['declare with options', 'declare -rx GITLAB_TOKEN=SECRETdeclare\n'],
    ['an unterminated quote', "echo hi\nexport X='SECRETopen\nmore SECRETlines\n"],
  ])('leaves no part of %s', (_, text) => {
    const out = cleaned(`alias ll='ls -l'\n${text}echo done\n`)
    expect(out).not.toMatch(/SECRET[a-z]/)
    expect(out.startsWith("alias ll='ls -l'\n")).toBe(true)
    expect(out.split('\n').length).toBe(`alias ll='ls -l'\n${text}echo done\n`.split('\n').length)
  })

  it('keeps the rest as it is, line for line', () => {
    const text =
      '# don\'t mind this\nexport EDITOR=vim\nPS1=\'\\u@\\h \\w$ \'\nf() {\n  echo "$(date) it\'s"\n}\ncat <<EOF\nhello\nEOF\nx=$((1 << 2))\nwhile read -r a; do :; done <<< "$x"\n# Author: Someone Longname <someone@example.org>\nwhile read -r token value; do :; done\n'
    expect(withoutCredentialLines(text)).toBeUndefined()
  })

  it('makes each line of the statement the comment', () => {
    expect(cleaned('export EDITOR=vim\nexport K="a\nb"\nexport GH_TOKEN=x\necho ok\n')).toBe(
      'export EDITOR=vim\nexport K="a\nb"\n# hmm: a line that sets GH_TOKEN, left out\necho ok\n',
    )
    expect(cleaned('export DB_PASSWORD="a\nb"\necho ok\n')).toBe(
      '# hmm: a line that sets DB_PASSWORD, left out\n# hmm: a line that sets DB_PASSWORD, left out\necho ok\n',
    )
  })

  it("judges fish's set with its options and continuations", () => {
    const out = cleaned('set -gx PAGER less\nset -lx GITHUB_TOKEN \\\n  SECRETfish\nfunction gh\n  set -lx GH_TOKEN SECRETfn\nend\n')
    expect(out).not.toMatch(/SECRET[a-z]/)
    expect(out).toContain('set -gx PAGER less\n')
    expect(out).toContain('function gh\n')
  })
})

describe("an editor's config", () => {
  it.each([
    [
      'init.lua',
      'vim.env.OPENAI_API_KEY = "SECRETnvim1"\nvim.opt.number = true\n',
      '-- hmm: a line that holds a credential, left out\nvim.opt.number = true\n',
    ],
    ['init.el', '(setq gptel-api-key "SECRETemacs1")\n(setq x 1)\n', ';; hmm: a line that holds a credential, left out\n(setq x 1)\n'],
    ['.vimrc', 'let g:codeium_api_key = "SECRETvimrc1"\nset number\n', '" hmm: a line that holds a credential, left out\nset number\n'],
    ['x.vim', "let g:copilot_token = 'SECRETvim12'\n", '" hmm: a line that holds a credential, left out\n'],
  ])('%s loses the line that holds a key', (name, text, expected) => {
    expect(withoutCredentialSettings(name, text)).toBe(expected)
  })

  it('keeps a file with no key as it is', () => {
    expect(withoutCredentialSettings('init.lua', 'vim.g.mapleader = " "\nlocal token = nil\n')).toBeUndefined()
  })
})

describe('a heredoc', () => {
  it('inside a substitution is read as a body, not as code', () => {
    expect(withoutCredentialLines("x=$(cat <<EOF\nit's here\nEOF\n)\necho ok\n")).toBeUndefined()
  })

  it('that gives a short password any value goes whole', () => {
    expect(cleaned('cat > ~/.netrc <<EOF\nmachine h login me password hunter2\nEOF\necho ok\n')).not.toContain('hunter2')
  })
})

describe('a statement', () => {
  it("that gives a tool's token as an option goes", () => {
    expect(cleaned('mytool --token=abcdefgh12345 run\necho ok\n')).toBe('# hmm: a line that holds a credential, left out\necho ok\n')
  })
})
