import { NodeCreateSchema, type FieldError } from '@postern/contract';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CheckboxField, TextField } from '../components/ui/form-field';
import { activateLanguage, loadMoreTexts } from '../i18n/i18n';
import { ApiError } from './api';
import { useZodForm } from './use-zod-form';

function NodeForm({ onValid }: { onValid: (data: unknown) => Promise<void> }) {
  const form = useZodForm(NodeCreateSchema, { name: '', address: '', isGateway: false, gatewayNetwork: '' });
  return (
    <form onSubmit={form.handleSubmit(onValid)} noValidate>
      <TextField label="Name" {...form.field('name')} />
      <TextField label="Address" {...form.field('address')} />
      <CheckboxField label="Gateway" {...form.field('isGateway')} />
      <TextField label="Gateway Network" {...form.field('gatewayNetwork')} />
      <button type="submit">Save</button>
    </form>
  );
}

const errorOf = (label: string) => {
  const input = screen.getByLabelText(label);
  const id = input.getAttribute('aria-describedby');
  return id ? document.getElementById(id)?.textContent : undefined;
};

describe('useZodForm with the contract schemas (console spec: Validation rules)', () => {
  it('validates a field on blur and again on input', () => {
    render(<NodeForm onValid={() => Promise.resolve()} />);
    fireEvent.blur(screen.getByLabelText('Name'));
    expect(errorOf('Name')).toBe('This field is not allowed to be empty');
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'home-lab' } });
    expect(errorOf('Name')).toBeUndefined();
    fireEvent.change(screen.getByLabelText('Address'), { target: { value: '10.0.0.300' } });
    expect(errorOf('Address')).toBe('This field must be a valid IPv4 address');
  });

  it('validates the whole form on submit, including cross-field rules', async () => {
    const onValid = vi.fn(() => Promise.resolve());
    render(<NodeForm onValid={onValid} />);
    fireEvent.click(screen.getByLabelText('Gateway'));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    expect(errorOf('Name')).toBe('This field is not allowed to be empty');
    expect(errorOf('Gateway Network')).toBe('This field is required');
    expect(onValid).not.toHaveBeenCalled();
  });

  it('submits the parsed values, with empty optional fields as null', async () => {
    const onValid = vi.fn(() => Promise.resolve());
    render(<NodeForm onValid={onValid} />);
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: '  home-lab ' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    expect(onValid).toHaveBeenCalledWith({ name: 'home-lab', address: null, isGateway: false, gatewayNetwork: null });
  });

  it("puts a 422's messages under their fields", async () => {
    const onValid = () =>
      Promise.reject(
        new ApiError(422, 'Request failed with status code 422', {
          serverMessage: 'Validation failed',
          fieldErrors: [{ field: 'name', message: 'A node with this name exists' }],
        }),
      );
    render(<NodeForm onValid={onValid} />);
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'taken' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    expect(errorOf('Name')).toBe('A node with this name exists');
  });

  describe("in the operator's language (docs/api.md 'Message codes')", () => {
    afterEach(() => activateLanguage('en'));

    const reject = (fieldErrors: FieldError[]) => () =>
      Promise.reject(
        new ApiError(422, 'Request failed with status code 422', { serverMessage: 'Validation failed', fieldErrors }),
      );

    it("says a 422's coded messages in the language; an unknown code or none in the server's English", async () => {
      await activateLanguage('de');
      await loadMoreTexts();
      render(
        <NodeForm
          onValid={reject([
            { field: 'name', message: 'This field is required', code: 'required' },
            { field: 'address', message: 'A message of a newer gateway', code: 'made_up_code', params: { n: 1 } },
            { field: 'gatewayNetwork', message: 'A message without a code' },
          ])}
        />,
      );
      fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'x' } });
      await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
      expect(errorOf('Name')).toBe('Dieses Feld ist erforderlich');
      expect(errorOf('Address')).toBe('A message of a newer gateway');
      expect(errorOf('Gateway Network')).toBe('A message without a code');
      // The form's own checks too: the same schemas, the same codes.
      fireEvent.change(screen.getByLabelText('Address'), { target: { value: '10.0.0.300' } });
      expect(errorOf('Address')).toBe('Dieses Feld muss eine gültige IPv4-Adresse sein');
    });

    it('shows the values in a message as text: a name like <img onerror> is never markup', async () => {
      await activateLanguage('de');
      await loadMoreTexts();
      const hostile = '<img src=x onerror="window.__pwned = 1">';
      render(
        <NodeForm
          onValid={reject([
            {
              field: 'name',
              message: `Port 8080/tcp is already used by the service "${hostile}"`,
              code: 'port_in_use_by',
              params: { port: 8080, proto: 'tcp', service: hostile },
            },
          ])}
        />,
      );
      fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'x' } });
      await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
      expect(errorOf('Name')).toBe(`Port 8080/tcp ist bereits durch den Dienst „${hostile}“ belegt`);
      expect(document.querySelector('img')).toBeNull();
      expect((window as { __pwned?: number }).__pwned).toBeUndefined();
    });
  });
});
