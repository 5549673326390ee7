import { describe, expect, it } from 'vitest';

import {
  absoluteFromRoot,
  commonPrefix,
  droppedPaths,
  escapeForWord,
  isPathLike,
  normalizeFolder,
  pathQuery,
  shellQuote,
  unescapeWord,
  wordAtCursor
} from './shell';

describe('shellQuote', () => {
  it('leaves safe words alone', () => {
    expect(shellQuote('src/app.py')).toBe('src/app.py');
    expect(shellQuote('/tmp/a-b_c.d')).toBe('/tmp/a-b_c.d');
  });

  it('single-quotes the rest and escapes single quotes', () => {
    expect(shellQuote('my file.txt')).toBe("'my file.txt'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('$HOME')).toBe("'$HOME'");
    expect(shellQuote('')).toBe("''");
  });
});

describe('absoluteFromRoot', () => {
  it('joins relative paths onto the root', () => {
    expect(absoluteFromRoot('/srv/projects', 'src/app.py')).toBe(
      '/srv/projects/src/app.py'
    );
    expect(absoluteFromRoot('/srv/projects/', 'a')).toBe('/srv/projects/a');
    expect(absoluteFromRoot('/srv/projects', '')).toBe('/srv/projects');
  });

  it('keeps absolute paths', () => {
    expect(absoluteFromRoot('/srv/projects', '/etc/hosts')).toBe('/etc/hosts');
    expect(absoluteFromRoot('C:\\work', 'D:\\x')).toBe('D:\\x');
  });

  it('uses the separator of a Windows root', () => {
    expect(absoluteFromRoot('C:\\work', 'src/app.py')).toBe(
      'C:\\work\\src\\app.py'
    );
  });
});

describe('wordAtCursor', () => {
  it('finds the word before the cursor', () => {
    const word = wordAtCursor('cat src/ap', 10);
    expect(word).toMatchObject({
      from: 4,
      to: 10,
      raw: 'src/ap',
      text: 'src/ap',
      isCommand: false
    });
  });

  it('knows the command position', () => {
    expect(wordAtCursor('ls', 2).isCommand).toBe(true);
    expect(wordAtCursor('cd a && ls', 10).isCommand).toBe(true);
    expect(wordAtCursor('echo x | gr', 11).isCommand).toBe(true);
    expect(wordAtCursor('ls ', 3)).toMatchObject({
      raw: '',
      isCommand: false
    });
  });

  it('keeps escaped blanks in the word', () => {
    expect(wordAtCursor('cat my\\ fi', 10)).toMatchObject({
      from: 4,
      text: 'my fi',
      quote: ''
    });
  });

  it('reports an open quote', () => {
    expect(wordAtCursor("cat 'my fi", 10)).toMatchObject({
      from: 4,
      text: 'my fi',
      quote: "'"
    });
  });
});

describe('unescapeWord and escapeForWord', () => {
  it('round-trip names with special characters', () => {
    for (const quote of ['', "'", '"']) {
      const name = `a b'c"d$e`;
      const written = escapeForWord(name, quote);
      expect(unescapeWord(quote + written + quote)).toBe(name);
    }
  });
});

describe('isPathLike', () => {
  it('completes arguments and path-shaped commands', () => {
    expect(isPathLike(wordAtCursor('cat sr', 6))).toBe(true);
    expect(isPathLike(wordAtCursor('./scr', 5))).toBe(true);
    expect(isPathLike(wordAtCursor('bin/x', 5))).toBe(true);
    expect(isPathLike(wordAtCursor('gi', 2))).toBe(false);
    expect(isPathLike(wordAtCursor('ls --al', 7))).toBe(false);
    expect(isPathLike(wordAtCursor('echo $HO', 8))).toBe(false);
  });
});

describe('pathQuery', () => {
  it('resolves against the working folder', () => {
    expect(pathQuery('src/ap', '/projects')).toEqual({
      folder: '/projects/src',
      folderPart: 'src/',
      prefix: 'ap'
    });
    expect(pathQuery('ap', '/projects/')).toEqual({
      folder: '/projects',
      folderPart: '',
      prefix: 'ap'
    });
    expect(pathQuery('../x/', '/projects/a')).toEqual({
      folder: '/projects/x',
      folderPart: '../x/',
      prefix: ''
    });
    expect(pathQuery('/etc/ho', '/projects').folder).toBe('/etc');
  });

  it('leaves home and variables to the shell', () => {
    expect(pathQuery('~/x', '/projects').folder).toBeNull();
    expect(pathQuery('$HOME/x', '/projects').folder).toBeNull();
  });
});

describe('normalizeFolder', () => {
  it('collapses dots and slashes', () => {
    expect(normalizeFolder('/a//b/./c/../d/')).toBe('/a/b/d');
    expect(normalizeFolder('/..')).toBe('/');
  });
});

describe('commonPrefix', () => {
  it('is the longest shared start', () => {
    expect(commonPrefix(['string_helpers.py', 'strings.txt'])).toBe('string');
    expect(commonPrefix(['a'])).toBe('a');
    expect(commonPrefix([])).toBe('');
    expect(commonPrefix(['abc', 'xyz'])).toBe('');
  });
});

describe('droppedPaths', () => {
  it('makes the paths absolute and quotes them', () => {
    expect(
      droppedPaths(['src/app.py', "docs/it's here.md"], '/srv/projects')
    ).toBe("/srv/projects/src/app.py '/srv/projects/docs/it'\\''s here.md'");
  });

  it('drops the prefix of other drives', () => {
    expect(droppedPaths(['RTC:notes/a b.txt'], '/w')).toBe(
      "'/w/notes/a b.txt'"
    );
  });

  it('keeps paths relative when the root is unknown', () => {
    expect(droppedPaths(['a.txt'], '')).toBe('a.txt');
  });
});
