import { operations, type Domain } from '@postern/contract';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { call, isStoredButNotAppliedError } from '../../lib/api';
import { domainAccessQueryOptions, saveDomainAccess } from '../../queries/access';
import { domainKeys } from '../../queries/domains';
import { domainAccessValues } from './access-form-rules';
import { useAccessDraftCore, type AccessDraft, type LoadedAccess } from './use-access-draft';

// The Access section of the domain form: the domain's policy, saved after the domain itself.

const PUBLIC_VALUES = domainAccessValues(null);

export function useDomainAccess(domain: Domain | undefined) {
  const queryClient = useQueryClient();
  const query = useQuery({ ...domainAccessQueryOptions(domain?.id ?? 0), enabled: domain !== undefined });
  let loaded: LoadedAccess;
  if (!domain) loaded = { status: 'ready', values: PUBLIC_VALUES, isPasswordSet: false };
  else if (query.isSuccess)
    loaded = {
      status: 'ready',
      values: domainAccessValues(query.data.policy),
      isPasswordSet: query.data.policy.passwordSet,
    };
  else loaded = { status: query.isError ? 'error' : 'loading' };
  const draft: AccessDraft = useAccessDraftCore('domain', loaded, true, PUBLIC_VALUES);

  const persistFor = (domainId: number) =>
    draft.persist(async ({ mode, ...fields }) => {
      // A domain is never 'inherit': the section offers it public and protected only.
      const body = { ...fields, mode: mode === 'protected' ? ('protected' as const) : ('public' as const) };
      return (await saveDomainAccess(queryClient, domainId, body)).policy;
    });

  return {
    draft,
    /** Runs the domain's PATCH, then the policy's; a failed check stops before anything is sent. */
    saving: async (save: () => Promise<Domain>): Promise<Domain> => {
      draft.assertValid();
      const saved = await save();
      (await persistFor(saved.id))();
      return saved;
    },
    /**
     * Runs the domain's POST, then the policy's. A refused policy deletes the new domain again (it served nothing
     * yet), so the form can be sent again as it is, and nothing was changed.
     */
    creating: async (create: () => Promise<Domain>): Promise<Domain> => {
      draft.assertValid();
      const created = await create();
      try {
        (await persistFor(created.id))();
      } catch (error) {
        if (!isStoredButNotAppliedError(error)) {
          await call(operations.deleteDomain, { params: { id: created.id } }).catch((rollbackError: unknown) =>
            console.error('deleting the new domain after its policy was refused failed', rollbackError),
          );
          await queryClient.invalidateQueries({ queryKey: domainKeys.all });
        }
        throw error;
      }
      return created;
    },
  };
}
