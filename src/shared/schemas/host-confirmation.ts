import { z } from 'zod';

/**
 * A question the host put to the operator outside the page (the terminal running `archon serve`),
 * announced to every connected page while it waits and once it is answered, so no page waits in silence.
 */
export const HostConfirmationSchema = z.object({
  id: z.string(),
  /** Where the operator answers it. */
  where: z.enum(['terminal']),
  title: z.string(),
  changes: z.array(z.string()),
  /** `withdrawn`: the page's request ended (or the host stopped) before the terminal answered; nothing changed. */
  state: z.enum(['pending', 'allowed', 'refused', 'withdrawn']),
});
export type HostConfirmation = z.infer<typeof HostConfirmationSchema>;
