import { z } from 'zod';

// Where a service comes from when something other than a person made it (docs/LABELS.md): today the Docker labels
// of a container on the node, published by the node's agent (`postern connect --daemon --docker`) through the node's
// access token. The gateway keeps it to show it in the console and hand it back to the agent, which recognises its
// own services by it after a restart; it grants nothing (the token's rights are what they always were).

/** Docker's container names: `[a-zA-Z0-9][a-zA-Z0-9_.-]+`. */
export const CONTAINER_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
/** Which of a container's services: `http` or `tcp` for the one of its kind, or `http.<name>` / `tcp.<name>`. */
export const LABEL_SERVICE_KEY_PATTERN = /^(http|tcp)(\.[a-z0-9][a-z0-9_-]{0,31})?$/;

export const ServiceSourceSchema = z
  .object({
    kind: z.literal('docker-labels'),
    /** The container's name, without Docker's leading `/`. */
    container: z.string().regex(CONTAINER_NAME_PATTERN, 'This field must be a Docker container name'),
    key: z.string().regex(LABEL_SERVICE_KEY_PATTERN, 'This field must be http, tcp, http.NAME or tcp.NAME'),
    /** SHA-256 (hex) of what the labels asked for: the agent replaces the service when its labels change. */
    digest: z.string().regex(/^[0-9a-f]{64}$/, 'This field must be a SHA-256 digest in hex'),
  })
  .strict();
export type ServiceSource = z.infer<typeof ServiceSourceSchema>;

// ---- What the agent reports about the labels (docs/LABELS.md "Bad labels") -----------------------------

/** At most this many problems per report (a node with thousands of bad containers sends the first ones). */
export const LABEL_PROBLEMS_MAX = 200;
/** A problem's message: one printable line (the agent makes them so; the gateway refuses anything else). */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const LABEL_PROBLEM_TEXT = /^[^\u0000-\u001f\u007f]*$/;

export const LabelProblemSchema = z
  .object({
    /** The container's name as the agent shows it (a name Docker would refuse is shown escaped). */
    container: z.string().min(1).max(200).regex(LABEL_PROBLEM_TEXT, 'This field must be one printable line'),
    /** `http`, `tcp.db`…; absent: the container as a whole. */
    key: z.string().regex(LABEL_SERVICE_KEY_PATTERN, 'This field must be http, tcp, http.NAME or tcp.NAME').optional(),
    message: z.string().min(1).max(600).regex(LABEL_PROBLEM_TEXT, 'This field must be one printable line'),
  })
  .strict();
export type LabelProblemReport = z.infer<typeof LabelProblemSchema>;

/** The agent's report after each pass (`PATCH /api/agent/node/label-problems`): the current problems, all of them. */
export const LabelProblemsUpdateSchema = z
  .object({ problems: z.array(LabelProblemSchema).max(LABEL_PROBLEMS_MAX) })
  .strict();
export type LabelProblemsUpdate = z.infer<typeof LabelProblemsUpdateSchema>;

/** A node's label problems as the console shows them; `checkedAt` null: its agent never reported (no `--docker`). */
export const NodeLabelProblemsSchema = z.object({
  checkedAt: z.string().nullable(),
  problems: z.array(LabelProblemSchema),
});
export type NodeLabelProblems = z.infer<typeof NodeLabelProblemsSchema>;
