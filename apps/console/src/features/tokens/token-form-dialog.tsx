import type { PersonalAccessTokenCreated } from '@postern/contract';
import { TokenCreateSchema } from '@postern/contract';
import { useEffect } from 'react';
import { DatePicker } from '../../components/ui/date-picker';
import { FormDialog } from '../../components/ui/dialog';
import { TextField } from '../../components/ui/form-field';
import { useZodForm } from '../../lib/use-zod-form';
import { useCreateToken } from '../../queries/tokens';
import { t } from '../../i18n/i18n';

type TokenFormValues = { name: string; expireAt: string | undefined };
const emptyValues: TokenFormValues = { name: '', expireAt: undefined };

export function TokenFormDialog({
  nodeId,
  open,
  onClose,
  onCreated,
}: {
  nodeId: number;
  open: boolean;
  onClose: () => void;
  onCreated: (token: PersonalAccessTokenCreated) => void;
}) {
  const form = useZodForm(TokenCreateSchema, emptyValues);
  const createToken = useCreateToken(nodeId);
  const { reset } = form;

  useEffect(() => {
    if (open) reset(emptyValues);
  }, [open, reset]);

  const submit = form.handleSubmit(async (body) => {
    const created = await createToken.mutateAsync(body);
    onClose();
    onCreated(created);
  });

  const expireAt = form.field('expireAt');
  return (
    <FormDialog
      open={open}
      title={t('tokens.form.title')}
      size="small"
      onClose={onClose}
      onSubmit={submit}
      isSubmitting={form.isSubmitting}
    >
      <TextField
        label={t('tokens.column.name')}
        placeholder={t('tokens.form.namePlaceholder')}
        required
        {...form.field('name')}
      />
      <DatePicker
        label={t('tokens.form.expireAt')}
        name="expireAt"
        description={t('tokens.form.expireAtHint')}
        value={expireAt.value}
        error={expireAt.error}
        onChange={expireAt.onChange}
      />
    </FormDialog>
  );
}
