import { ChangePasswordRequestSchema, operations } from '@postern/contract';
import { z } from 'zod';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { TextField } from '../../components/ui/form-field';
import { call } from '../../lib/api';
import { showToast } from '../../lib/toast-store';
import { useZodForm } from '../../lib/use-zod-form';

// The admin's password, changed in the console: the first one is generated and printed once at the first
// boot. The contract's operation (PATCH /api/auth/password) checks the current password and ends every other
// session; this session stays.

export const PASSWORDS_DIFFER_MESSAGE = 'The new passwords do not match';

export const PasswordChangeFormSchema = ChangePasswordRequestSchema.extend({
  confirmPassword: z.string(),
}).refine((values) => values.confirmPassword === values.newPassword, {
  path: ['confirmPassword'],
  message: PASSWORDS_DIFFER_MESSAGE,
});

const EMPTY = { currentPassword: '', newPassword: '', confirmPassword: '' };

export function PasswordCard() {
  const form = useZodForm(PasswordChangeFormSchema, EMPTY);
  const submit = form.handleSubmit(async ({ currentPassword, newPassword }) => {
    await call(operations.changePassword, { body: { currentPassword, newPassword } });
    form.reset(EMPTY);
    showToast({ message: 'Password changed. Every other session is signed out.', type: 'success' });
  });
  return (
    <Card title="Password">
      <form
        onSubmit={(event) => void submit(event)}
        noValidate
        aria-label="Change password"
        className="flex max-w-md flex-col gap-4 p-4"
      >
        <p className="text-sm text-gray-600 dark:text-gray-300">
          Changing the password signs out every other session of this account; this one stays signed in.
        </p>
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          {...form.field('currentPassword')}
        />
        <TextField
          label="New password"
          type="password"
          autoComplete="new-password"
          required
          description="At least 12 characters."
          {...form.field('newPassword')}
        />
        <TextField
          label="Repeat the new password"
          type="password"
          autoComplete="new-password"
          required
          {...form.field('confirmPassword')}
        />
        <div>
          <Button type="submit" isLoading={form.isSubmitting}>
            Change password
          </Button>
        </div>
      </form>
    </Card>
  );
}
