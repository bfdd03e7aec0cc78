import { describe, expect, it } from 'vitest';
import { ApiError } from '../lib/api';
import { checkCredentials, loginFailureMessage } from './login-page';

describe('login page rules (console spec: Error catalogue)', () => {
  it("says 'Too many attempts, try again later' on 429 and 'Invalid Credentials' otherwise", () => {
    expect(loginFailureMessage(new ApiError(429, 'Request failed with status code 429'))).toBe(
      'Too many attempts, try again later',
    );
    expect(loginFailureMessage(new ApiError(401, 'Request failed with status code 401'))).toBe('Invalid Credentials');
    expect(loginFailureMessage(new ApiError(422, 'Request failed with status code 422'))).toBe('Invalid Credentials');
  });

  it('says the gateway could not be reached, or failed, instead of blaming the credentials', () => {
    expect(loginFailureMessage(new ApiError(0, 'Network Error'))).toMatch(
      /^Network Error: the gateway could not be reached/,
    );
    expect(loginFailureMessage(new ApiError(503, 'Request failed with status code 503'))).toBe(
      'The gateway could not sign you in right now (status 503). Try again in a moment.',
    );
  });

  it('asks for both fields before calling the server', () => {
    expect(checkCredentials({ username: ' ', password: '' })).toEqual({
      username: 'This field is not allowed to be empty',
      password: 'This field is not allowed to be empty',
    });
    expect(checkCredentials({ username: 'admin', password: 'x' })).toEqual({});
  });
});
