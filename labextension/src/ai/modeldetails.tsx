/**
 * What the user says about a model: its context window, output limit,
 * prices (US dollars per million tokens, so turns can show their cost) and
 * whether it reads images (tool results then show it notebook plots).
 * None of the built-in models ship prices: they change too often.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import type { IAiModel } from '../api/ai';
import { CSS } from './css';
import type { AiPanelModel } from './panelmodel';

interface IModelDetailsProps {
  model: AiPanelModel;
  trans: TranslationBundle;
  provider: string;
  modelId: string;
}

interface IFields {
  context: string;
  output: string;
  input: string;
  outputPrice: string;
  vision: boolean;
}

function fieldsOf(known: IAiModel | undefined): IFields {
  const text = (value: number | null | undefined): string =>
    value === null || value === undefined ? '' : String(value);
  return {
    context: text(known?.context_window),
    output: text(known?.max_output_tokens),
    input: text(known?.input_price),
    outputPrice: text(known?.output_price),
    vision: known?.vision ?? false
  };
}

/**
 * A number typed in a field: null when empty, NaN when not a number.
 */
function parsed(value: string): number | null {
  const trimmed = value.trim();
  return trimmed ? Number(trimmed) : null;
}

/**
 * The details form of the model chosen in the settings view.
 */
export function ModelDetails(props: IModelDetailsProps): JSX.Element | null {
  const { model, trans, provider, modelId } = props;
  const known = model.models(provider).find(m => m.id === modelId);
  const [fields, setFields] = React.useState<IFields>(fieldsOf(known));
  const [message, setMessage] = React.useState<{
    ok: boolean;
    text: string;
  } | null>(null);
  const [saving, setSaving] = React.useState(false);

  // Another model, or its details arrived: show what is known of it.
  const shown = `${provider}|${modelId}`;
  const [lastShown, setLastShown] = React.useState(shown);
  const [wasKnown, setWasKnown] = React.useState(known !== undefined);
  if (shown !== lastShown || (known !== undefined) !== wasKnown) {
    if (shown !== lastShown) {
      setMessage(null);
    }
    setLastShown(shown);
    setWasKnown(known !== undefined);
    setFields(fieldsOf(known));
  }

  if (!provider || !modelId) {
    return null;
  }

  const set =
    (name: Exclude<keyof IFields, 'vision'>) =>
    (event: React.ChangeEvent<HTMLInputElement>): void =>
      setFields({ ...fields, [name]: event.target.value });

  const save = async (): Promise<void> => {
    const context = parsed(fields.context);
    const output = parsed(fields.output);
    const input = parsed(fields.input);
    const outputPrice = parsed(fields.outputPrice);
    if (context === null || !Number.isInteger(context)) {
      setMessage({
        ok: false,
        text: trans.__(
          'Say how many tokens %1 takes in (its context window), a whole number.',
          modelId
        )
      });
      return;
    }
    if ([input, outputPrice].some(p => p !== null && !(p >= 0))) {
      setMessage({
        ok: false,
        text: trans.__(
          'Prices are US dollars per million tokens: a number from 0, or empty.'
        )
      });
      return;
    }
    if ((input === null) !== (outputPrice === null)) {
      setMessage({
        ok: false,
        text: trans.__('Give both prices, or neither: a cost needs both.')
      });
      return;
    }
    setSaving(true);
    const problem = await model.describeModel({
      provider,
      id: modelId,
      context_window: context,
      ...(output !== null ? { max_output_tokens: output } : {}),
      ...(known ? { tools: known.tools, reasoning: known.reasoning } : {}),
      input_price: input,
      output_price: outputPrice,
      vision: fields.vision
    });
    setSaving(false);
    if (!problem) {
      // What the server keeps (it fills in the output limit when empty).
      setFields(fieldsOf(model.models(provider).find(m => m.id === modelId)));
    }
    setMessage(
      problem
        ? { ok: false, text: problem }
        : {
            ok: true,
            text:
              input === null
                ? trans.__('Saved. Turns show no cost without prices.')
                : trans.__('Saved. New turns show their cost.')
          }
    );
  };

  const numberField = (
    name: Exclude<keyof IFields, 'vision'>,
    label: string,
    placeholder: string,
    step: string
  ): JSX.Element => (
    <label className={CSS.field}>
      <span>{label}</span>
      <input
        className={CSS.textInput}
        type="number"
        min="0"
        step={step}
        inputMode="decimal"
        value={fields[name]}
        aria-label={label}
        placeholder={placeholder}
        onChange={set(name)}
        onKeyDown={event => {
          if (event.key === 'Enter') {
            event.preventDefault();
            void save();
          }
        }}
      />
    </label>
  );

  return (
    <section className={CSS.section} aria-label={trans.__('Model details')}>
      <h3>{trans.__('Model details · %1', modelId)}</h3>
      <div className={CSS.fieldGrid}>
        {numberField(
          'context',
          trans.__('Context window (tokens)'),
          trans.__('e.g. 128000'),
          '1'
        )}
        {numberField(
          'output',
          trans.__('Max output (tokens)'),
          trans.__('default'),
          '1'
        )}
        {numberField(
          'input',
          trans.__('Input price ($ / M tokens)'),
          trans.__('unknown'),
          'any'
        )}
        {numberField(
          'outputPrice',
          trans.__('Output price ($ / M tokens)'),
          trans.__('unknown'),
          'any'
        )}
      </div>
      <label className={CSS.checkRow}>
        <input
          type="checkbox"
          checked={fields.vision}
          onChange={event =>
            setFields({ ...fields, vision: event.target.checked })
          }
        />
        {trans.__(
          'Reads images (notebook plots in tool results are shown to it)'
        )}
      </label>
      <div className={CSS.actions}>
        <button
          type="button"
          className={CSS.button}
          disabled={saving}
          onClick={() => void save()}
        >
          {trans.__('Save model details')}
        </button>
      </div>
      {message && (
        <div
          className={`${CSS.testResult} ${message.ok ? CSS.ok : CSS.error}`}
          role="status"
        >
          {message.text}
        </div>
      )}
    </section>
  );
}
