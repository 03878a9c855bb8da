/**
 * The pieces apt's decisions and output rest on: Debian version ordering (dpkg's verrevcmp),
 * apt's size/time formatting in the C and en_US locales, and its list wrapping.
 */
import { describe, expect, test } from 'vitest';
import { compareVersions, satisfies } from '../../lab/apt/version.js';
import { groupsThousands, showList, sizeToStr, timeToStr } from '../../lab/apt/format.js';
import { parseSources } from '../../lab/apt/repos.js';

describe('Debian version ordering', () => {
  test.each([
    ['1.0~rc1', '1.0'],
    ['1.0', '1.0+b1'],
    ['1:1.0', '2:0.1'],
    ['9', '1:0'],
    ['39.0-1', '2410mlnx54-1.2410068'],
    ['580.95.05-0ubuntu0.22.04.1', '580.126.09-0ubuntu0.22.04.1'],
    ['580.126.09-0ubuntu0.22.04.1', '580.126.09-0ubuntu1'],
    ['4.2-2ubuntu2', '4.2-2ubuntu2.1'],
    ['2.28.9-1+cuda12.9', '2.28.9-1+cuda13.0'],
    ['1.0-1', '1.0a'],
  ])('%s < %s', (a, b) => {
    expect(compareVersions(a, b)).toBeLessThan(0);
    expect(compareVersions(b, a)).toBeGreaterThan(0);
  });

  test('equal versions and relations', () => {
    expect(compareVersions('1:5.16-1ubuntu0.1', '1:5.16-1ubuntu0.1')).toBe(0);
    expect(compareVersions('1.0', '1.0-0')).toBe(0);
    expect(satisfies('580.126.09-0ubuntu0.22.04.1', '>=', '580.126.09')).toBe(true);
    expect(satisfies('580.95.05-0ubuntu0.22.04.1', '>=', '580.126.09')).toBe(false);
    expect(satisfies('1.0', '<<', '1.0')).toBe(false);
  });
});

describe("apt's formats", () => {
  test('sizes: four significant digits at most, grouping by locale', () => {
    expect(sizeToStr(512, false)).toBe('512 B');
    expect(sizeToStr(5274, false)).toBe('5274 B');
    expect(sizeToStr(26_322, false)).toBe('26.3 kB');
    expect(sizeToStr(1_812_000, false)).toBe('1812 kB');
    expect(sizeToStr(1_812_000, true)).toBe('1,812 kB');
    expect(sizeToStr(24_600_000, false)).toBe('24.6 MB');
    expect(sizeToStr(162_000_000, false)).toBe('162 MB');
    expect(groupsThousands(new Map([['LANG', 'C.UTF-8']]))).toBe(false);
    expect(groupsThousands({ LANG: 'en_US.UTF-8' })).toBe(true);
    expect(groupsThousands({ LANG: 'en_US.UTF-8', LC_ALL: 'C' })).toBe(false);
  });

  test('times and lists', () => {
    expect(timeToStr(1)).toBe('1s');
    expect(timeToStr(65)).toBe('1min 5s');
    const names = [
      'ibverbs-providers',
      'ibverbs-utils',
      'infiniband-diags',
      'libibmad5',
      'libibnetdisc5',
      'libibumad3',
    ];
    // apt breaks before a name that would reach column 77 of the 80 it assumes without a terminal.
    expect(showList('The following NEW packages will be installed:', names)).toBe(
      'The following NEW packages will be installed:\n  ibverbs-providers ibverbs-utils infiniband-diags libibmad5 libibnetdisc5\n  libibumad3\n',
    );
    expect(showList('Suggested packages:', [])).toBe('');
  });

  test('sources lines: options, flat repositories, unknown mirrors', () => {
    const lines = parseSources(
      [
        '# comment',
        'deb http://archive.ubuntu.com/ubuntu jammy-updates main restricted',
        'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/ /',
        'deb-src http://archive.ubuntu.com/ubuntu jammy main',
        'deb http://mirror.example.org/ubuntu jammy main',
      ].join('\n'),
      'x.list',
    );
    expect(lines.map((l) => [l.uri, l.suite, l.components.join(' '), l.repo?.id])).toEqual([
      ['http://archive.ubuntu.com/ubuntu', 'jammy-updates', 'main restricted', 'jammy-updates'],
      ['https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64', '/', '', 'cuda'],
      ['http://mirror.example.org/ubuntu', 'jammy', 'main', undefined],
    ]);
  });
});
