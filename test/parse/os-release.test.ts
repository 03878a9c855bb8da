import { describe, expect, it } from 'vitest';
import { parseKernelRelease, parseOsRelease } from '../../src/parse/os-release.js';
import { ansiWrap, CUTS, toCrlf, truncateAt, withPrompt, withTrailingSpaces } from './fixtures.js';

// /etc/os-release of Ubuntu 22.04.5 (base-files 12ubuntu4.x), byte for byte.
const JAMMY = `PRETTY_NAME="Ubuntu 22.04.5 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.5 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
`;

// Rocky 9 quotes everything and has a multi-word ID_LIKE.
const ROCKY = `NAME="Rocky Linux"
VERSION="9.3 (Blue Onyx)"
ID="rocky"
ID_LIKE="rhel centos fedora"
VERSION_ID="9.3"
PLATFORM_ID="platform:el9"
PRETTY_NAME="Rocky Linux 9.3 (Blue Onyx)"
`;

describe('parseOsRelease', () => {
  it('reads Ubuntu 22.04 and the uname -r line after it', () => {
    const f = parseOsRelease(`${JAMMY}5.15.0-126-generic\n`);
    expect(f).toMatchObject({
      id: 'ubuntu',
      versionId: '22.04',
      versionMajor: 22,
      versionMinor: 4,
      versionCodename: 'jammy',
      prettyName: 'Ubuntu 22.04.5 LTS',
      idLike: ['debian'],
      ubuntuCodename: 'jammy',
      kernel: { release: '5.15.0-126-generic', major: 5, minor: 15, patch: 0, abi: 126, flavour: 'generic' },
    });
    expect(f.fields['HOME_URL']).toBe('https://www.ubuntu.com/');
  });

  it('reads fully quoted values and lists', () => {
    const f = parseOsRelease(ROCKY);
    expect(f).toMatchObject({ id: 'rocky', versionId: '9.3', idLike: ['rhel', 'centos', 'fedora'] });
    expect(f.versionCodename).toBeUndefined();
    expect(f.kernel).toBeUndefined();
  });

  it('unquotes single quotes and shell escapes', () => {
    const f = parseOsRelease(`NAME='My OS'\nPRETTY_NAME="say \\"hi\\" \\$HOME"\nID=myos # comment\n`);
    expect(f).toMatchObject({ name: 'My OS', prettyName: 'say "hi" $HOME', id: 'myos' });
  });

  it('survives CRLF, ANSI, prompt, trailing spaces', () => {
    const text = `${JAMMY}6.8.0-45-generic\n`;
    const base = parseOsRelease(text);
    for (const v of [
      toCrlf(text),
      ansiWrap(text),
      withPrompt(text, 'cat /etc/os-release; uname -r'),
      withTrailingSpaces(text),
    ]) {
      const f = parseOsRelease(v);
      expect(f.id).toBe('ubuntu');
      expect(f.versionId).toBe('22.04');
      expect(f.kernel).toEqual(base.kernel);
    }
  });

  it('keeps the fields of a truncated file and never throws', () => {
    for (const cut of CUTS) {
      const f = parseOsRelease(truncateAt(JAMMY, cut));
      expect(f.fields).toBeDefined();
    }
    expect(parseOsRelease(truncateAt(JAMMY, 0.3))).toMatchObject({
      prettyName: 'Ubuntu 22.04.5 LTS',
      versionId: '22.04',
    });
    expect(parseOsRelease('cat: /etc/os-release: No such file or directory')).toEqual({ fields: {} });
    expect(parseOsRelease('')).toEqual({ fields: {} });
  });
});

describe('parseKernelRelease', () => {
  it('splits Ubuntu GA, HWE and other flavours', () => {
    expect(parseKernelRelease('5.15.0-126-generic\n')).toEqual({
      release: '5.15.0-126-generic',
      major: 5,
      minor: 15,
      patch: 0,
      abi: 126,
      flavour: 'generic',
      localVersion: '126-generic',
    });
    // The jammy HWE kernel is flavour `generic` too; only its version tells it apart.
    expect(parseKernelRelease('6.8.0-45-generic')).toMatchObject({ major: 6, minor: 8, flavour: 'generic' });
    expect(parseKernelRelease('6.8.0-1015-nvidia-lowlatency')).toMatchObject({
      abi: 1015,
      flavour: 'nvidia-lowlatency',
    });
    expect(parseKernelRelease('5.14.0-1054-oem')).toMatchObject({ flavour: 'oem' });
  });

  it('keeps non-Ubuntu local versions without inventing a flavour', () => {
    const k = parseKernelRelease('4.18.0-272.el8.x86_64');
    expect(k).toMatchObject({ major: 4, minor: 18, abi: 272, localVersion: '272.el8.x86_64' });
    expect(k?.flavour).toBeUndefined();
    expect(parseKernelRelease('6.16.8-arch1-1')?.flavour).toBeUndefined();
  });

  it('skips a prompt line and returns undefined for junk', () => {
    expect(parseKernelRelease('user@l20-n1:~$ uname -r\n5.15.0-126-generic')?.release).toBe('5.15.0-126-generic');
    expect(parseKernelRelease('bash: uname: command not found')).toBeUndefined();
    expect(parseKernelRelease('')).toBeUndefined();
  });
});
