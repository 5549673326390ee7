/**
 * Render highlighted segments (from `common/highlight`) as text with marks.
 */
import * as React from 'react';

import type { ISegment } from '../common/highlight';

/**
 * Props of {@link Highlighted}.
 */
export interface IHighlightedProps {
  segments: readonly ISegment[];
  /**
   * Class of each matched run.
   */
  markClassName: string;
}

/**
 * Plain text with the matched runs wrapped in `<mark>`.
 */
export function Highlighted(props: IHighlightedProps): JSX.Element {
  return (
    <>
      {props.segments.map((segment, i) =>
        segment.match ? (
          <mark key={i} className={props.markClassName}>
            {segment.text}
          </mark>
        ) : (
          <React.Fragment key={i}>{segment.text}</React.Fragment>
        )
      )}
    </>
  );
}
