import { useId, useState } from 'react';
import { ModelPriceSchema } from '../../../../shared/schemas/run';
import type { Settings } from '../../../../shared/schemas/settings';
import { useAppStore } from '../../store/use-app-store';

/** A price in USD per million tokens, as the operator typed it; null when it is not one. */
function perMillion(text: string): number | null {
  const value = Number(text);
  return text.trim() !== '' && ModelPriceSchema.shape.inputPerMillion.safeParse(value).success ? value : null;
}

/** Prices of models Archon does not know (USD per million input and output tokens): a cost cap needs one. */
export function ModelPriceSettings({ settings }: { settings: Settings }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  const [model, setModel] = useState(settings.model);
  const [input, setInput] = useState('');
  const [output, setOutput] = useState('');
  const ids = { model: useId(), input: useId(), output: useId() };
  const price = { inputPerMillion: perMillion(input), outputPerMillion: perMillion(output) };
  const complete = model.trim() !== '' && price.inputPerMillion !== null && price.outputPerMillion !== null;
  const { modelPrices } = settings;
  return (
    <fieldset>
      <legend>Model prices</legend>
      <p className="span-2">A model on this machine or the local network costs nothing; a remote one without a price shows &quot;price unknown&quot;, and a run with a cost cap refuses to start against it.</p>
      {Object.keys(modelPrices).length > 0 && (
        <table className="span-2">
          <caption>Prices in USD per million tokens</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Input</th>
              <th scope="col">Output</th>
              <th scope="col">
                Remove
              </th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(modelPrices).map(([name, set]) => (
              <tr key={name}>
                <td>{name}</td>
                <td>${set.inputPerMillion}</td>
                <td>${set.outputPerMillion}</td>
                <td>
                  <button type="button" onClick={() => void updateSettings({ modelPrices: Object.fromEntries(Object.entries(modelPrices).filter(([other]) => other !== name)) })}>
                    Remove price of {name}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <label htmlFor={ids.model}>Priced model</label>
      <input id={ids.model} value={model} onChange={(event) => setModel(event.target.value)} />
      <label htmlFor={ids.input}>Input, USD per million tokens</label>
      <input id={ids.input} inputMode="decimal" value={input} aria-invalid={input !== '' && price.inputPerMillion === null} onChange={(event) => setInput(event.target.value)} />
      <label htmlFor={ids.output}>Output, USD per million tokens</label>
      <input id={ids.output} inputMode="decimal" value={output} aria-invalid={output !== '' && price.outputPerMillion === null} onChange={(event) => setOutput(event.target.value)} />
      <span />
      <button
        type="button"
        disabled={!complete}
        onClick={() => {
          if (price.inputPerMillion === null || price.outputPerMillion === null) return;
          void updateSettings({ modelPrices: { ...modelPrices, [model.trim()]: { inputPerMillion: price.inputPerMillion, outputPerMillion: price.outputPerMillion } } });
          setInput('');
          setOutput('');
        }}
      >
        Save price
      </button>
    </fieldset>
  );
}
