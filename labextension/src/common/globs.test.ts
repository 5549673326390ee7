import { describe, expect, it } from 'vitest';

import { expandBraces, splitGlobs } from './globs';

describe('splitGlobs', () => {
  it('splits on commas and trims', () => {
    expect(splitGlobs(' *.py, src/** ,')).toEqual(['*.py', 'src/**']);
  });

  it('is empty for blank input', () => {
    expect(splitGlobs('  ,  ')).toEqual([]);
    expect(splitGlobs('')).toEqual([]);
  });

  it('expands braces instead of splitting inside them', () => {
    expect(splitGlobs('*.{ts,tsx}, docs')).toEqual(['*.ts', '*.tsx', 'docs']);
  });

  it('drops duplicates', () => {
    expect(splitGlobs('*.py, *.py')).toEqual(['*.py']);
  });
});

describe('expandBraces', () => {
  it('expands nested groups', () => {
    expect(expandBraces('a{b,{c,d}}e')).toEqual(['abe', 'ace', 'ade']);
  });

  it('expands several groups', () => {
    expect(expandBraces('{a,b}/{c,d}')).toEqual(['a/c', 'a/d', 'b/c', 'b/d']);
  });

  it('keeps braces without alternatives and unbalanced ones', () => {
    expect(expandBraces('{a}.txt')).toEqual(['{a}.txt']);
    expect(expandBraces('{a,b')).toEqual(['{a,b']);
  });

  it('stops at the limit', () => {
    expect(expandBraces('{a,b,c}{d,e,f}', 4)).toHaveLength(4);
  });
});
