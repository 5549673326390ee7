import { describe, expect, it } from 'vitest';

import { basename, dirname, extname, splitPath } from './paths';

describe('basename', () => {
  it('returns the last segment', () => {
    expect(basename('src/app.py')).toBe('app.py');
    expect(basename('app.py')).toBe('app.py');
    expect(basename('src/pkg/')).toBe('pkg');
    expect(basename('')).toBe('');
  });
});

describe('dirname', () => {
  it('returns the folder without the separator', () => {
    expect(dirname('src/app.py')).toBe('src');
    expect(dirname('a/b/c.txt')).toBe('a/b');
    expect(dirname('app.py')).toBe('');
    expect(dirname('/etc/hosts')).toBe('/etc');
    expect(dirname('/hosts')).toBe('/');
    expect(dirname('src/pkg/')).toBe('src');
  });
});

describe('extname', () => {
  it('returns the lower-case extension of the name', () => {
    expect(extname('a/B.PY')).toBe('.py');
    expect(extname('archive.tar.gz')).toBe('.gz');
    expect(extname('.env')).toBe('');
    expect(extname('Makefile')).toBe('');
    expect(extname('v1.2/notes')).toBe('');
  });
});

describe('splitPath', () => {
  it('rebases positions onto the name and the folder', () => {
    expect(splitPath('src/utils/app.py', [0, 4, 10, 11])).toEqual({
      name: 'app.py',
      namePositions: [0, 1],
      folder: 'src/utils',
      folderPositions: [0, 4]
    });
  });

  it('drops the separator position', () => {
    expect(splitPath('a/b', [1])).toEqual({
      name: 'b',
      namePositions: [],
      folder: 'a',
      folderPositions: []
    });
  });

  it('handles a file at the root', () => {
    expect(splitPath('README.md', [0])).toEqual({
      name: 'README.md',
      namePositions: [0],
      folder: '',
      folderPositions: []
    });
  });

  it('counts code points', () => {
    expect(splitPath('\u{1F600}/x', [0, 2])).toEqual({
      name: 'x',
      namePositions: [0],
      folder: '\u{1F600}',
      folderPositions: [0]
    });
  });
});
