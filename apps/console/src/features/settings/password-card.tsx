import { ChangePasswordRequestSchema, operations } from '@postern/contract';
import { z } from 'zod';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { TextField } from '../../components/ui/form-field';
import { t } from '../../i18n/i18n';
import { call } from '../../lib/api';
import { showToast } from '../../lib/toast-store';
import { useZodForm } from '../../lib/use-zod-form';

// The admin's password, changed in the console: the first one is generated and printed once at the first
// boot. The contract's operation (PATCH /api/auth/password) checks the current password and ends every other
// session; this session stays.

/** The English text (the tests look for it); the form shows it in the active language, read when the check runs. */
export const PASSWORDS_DIFFER_MESSAGE = 'The new passwords do not match';

export const PasswordChangeFormSchema = ChangePasswordRequestSchema.extend({
  confirmPassword: z.string(),
}).refine((values) => values.confirmPassword === values.newPassword, {
  path: ['confirmPassword'],
  error: () => t('settings.password.differ'),
});

const EMPTY = { currentPassword: '', newPassword: '', confirmPassword: '' };

export function PasswordCard() {
  const form = useZodForm(PasswordChangeFormSchema, EMPTY);
  const submit = form.handleSubmit(async ({ currentPassword, newPassword }) => {
    await call(operations.changePassword, { body: { currentPassword, newPassword } });
    form.reset(EMPTY);
    showToast({ message: t('settings.password.changed'), type: 'success' });
  });
  return (
    <Card title={t('login.password')}>
      <form
        onSubmit={(event) => void submit(event)}
        noValidate
        aria-label={t('settings.password.change')}
        className="flex max-w-md flex-col gap-4 p-4"
      >
        <p className="text-sm text-gray-600 dark:text-gray-300">{t('settings.password.intro')}</p>
        <TextField
          label={t('settings.password.current')}
          type="password"
          autoComplete="current-password"
          required
          {...form.field('currentPassword')}
        />
        <TextField
          label={t('settings.password.new')}
          type="password"
          autoComplete="new-password"
          required
          description={t('settings.password.minLength')}
          {...form.field('newPassword')}
        />
        <TextField
          label={t('settings.password.repeat')}
          type="password"
          autoComplete="new-password"
          required
          {...form.field('confirmPassword')}
        />
        <div>
          <Button type="submit" isLoading={form.isSubmitting}>
            {t('settings.password.change')}
          </Button>
        </div>
      </form>
    </Card>
  );
}
