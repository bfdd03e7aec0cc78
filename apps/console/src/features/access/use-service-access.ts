import {
  limits,
  operations,
  timing,
  type HttpService,
  type HttpServiceCreate,
  type Node,
  type ServiceAccess,
} from '@postern/contract';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { call, isStoredButNotAppliedError } from '../../lib/api';
import { domainAccessQueryOptions, saveServiceAccess, serviceAccessQueryOptions } from '../../queries/access';
import { domainListQueryOptions } from '../../queries/domains';
import { serviceKeys } from '../../queries/services';
import { serviceAccessValues } from './access-form-rules';
import { useAccessDraftCore, type AccessDraft, type LoadedAccess } from './use-access-draft';

// The Access section of the HTTP service form: the service's own policy (or inherit), saved after the service. A new
// service with a policy of its own is created disabled, given its policy, then enabled, so it is never served under
// its domain's policy in between (docs/ACCESS.md: never unprotected, not even for a moment).

const INHERIT_VALUES = serviceAccessValues(null);

/** The value `delayMs` after it last changed (the domain field is typed a letter at a time). */
function useSettled<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

/** The policy of the domain named in the form (what "inherit" means there); null while unknown or for no domain. */
function useInheritedPolicy(domainText: string, stored: ServiceAccess | undefined) {
  const name = useSettled(domainText.trim().toLowerCase(), timing.autocompleteDebounceMs);
  const isStoredDomain = stored !== undefined && stored.domain === name;
  const found = useQuery({
    ...domainListQueryOptions({ page: 1, limit: limits.listMaxLimit, search: name }),
    enabled: name !== '' && !isStoredDomain,
  });
  const domainId = found.data?.data.find((domain) => domain.domain === name)?.id;
  const policy = useQuery({ ...domainAccessQueryOptions(domainId ?? 0), enabled: domainId !== undefined });
  if (name === '') return null;
  if (isStoredDomain) return stored.domainPolicy;
  // A domain not created yet has no policy: public.
  if (found.isSuccess && domainId === undefined) return null;
  return policy.data?.policy ?? null;
}

export function useServiceAccess(node: Node, service: HttpService | undefined, domainText: string) {
  const queryClient = useQueryClient();
  const ref = { nodeId: node.id, id: service?.id ?? 0 };
  const query = useQuery({ ...serviceAccessQueryOptions(ref), enabled: service !== undefined });
  let loaded: LoadedAccess;
  if (!service) loaded = { status: 'ready', values: INHERIT_VALUES, isPasswordSet: false };
  else if (query.isSuccess)
    loaded = {
      status: 'ready',
      values: serviceAccessValues(query.data),
      isPasswordSet: query.data.own?.passwordSet ?? false,
    };
  else loaded = { status: query.isError ? 'error' : 'loading' };
  const core = useAccessDraftCore('service', loaded, domainText.trim() !== '', INHERIT_VALUES);
  const inherited = useInheritedPolicy(domainText, query.data);
  const draft: AccessDraft = { ...core, inherited };

  const persistFor = (saved: { nodeId: number; id: number }) =>
    draft.persist(async (body) => {
      const answer = await saveServiceAccess(queryClient, { nodeId: saved.nodeId, id: saved.id }, body);
      return { passwordSet: answer.own?.passwordSet ?? false };
    });

  type Save = (args: { ref: { nodeId: number; id: number }; body: HttpServiceCreate }) => Promise<HttpService>;
  type Create = (args: { nodeId: number; body: HttpServiceCreate }) => Promise<HttpService>;

  return {
    draft,
    /** The service's access as stored (undefined for a new service or while it loads). */
    stored: query.data,
    /** The form's PATCH, then the policy's; a failed check stops before anything is sent. */
    updating:
      (update: Save): Save =>
      async (args) => {
        draft.assertValid();
        const saved = await update(args);
        (await persistFor(saved))();
        return saved;
      },
    /**
     * The form's POST. With a policy of its own: created disabled, the policy set, then enabled. A refused policy
     * deletes the service again (it was never served), so the form can be sent again as it is.
     */
    creating:
      (create: Create): Create =>
      async (args) => {
        draft.assertValid();
        if (!draft.isChanged()) return await create(args);
        const created = await create({ ...args, body: { ...args.body, enabled: false } });
        const params = { nodeId: created.nodeId, type: 'http' as const, id: created.id };
        let stage: 'policy' | 'enable' = 'policy';
        try {
          const commit = await persistFor(created);
          stage = 'enable';
          const enabled = await call(operations.enableService, { params });
          commit();
          return 'pathLocation' in enabled ? enabled : { ...created, enabled: true };
        } catch (error) {
          if (isStoredButNotAppliedError(error)) {
            // Stored, not applied (the operator was told why): publish as asked; the gateway serves it once it can.
            if (stage === 'policy') await call(operations.enableService, { params }).catch(() => undefined);
          } else {
            // Refused: the new service was never served; delete it, so the form can be sent again as it is.
            await call(operations.deleteService, { params }).catch((rollbackError: unknown) =>
              console.error('deleting the new service after its policy was refused failed', rollbackError),
            );
          }
          await queryClient.invalidateQueries({ queryKey: serviceKeys.all });
          throw error;
        }
      },
  };
}
