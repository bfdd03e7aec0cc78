// Who a single sign-on policy lets in (docs/ACCESS.md): the email is listed, or its domain is, or one of the user's
// groups is. Emails and domains compare lower-cased; groups exactly (providers treat them as opaque names).

export interface AllowLists {
  allowEmails: readonly string[];
  allowEmailDomains: readonly string[];
  allowGroups: readonly string[];
}

export function isLetIn(lists: AllowLists, email: string | null, groups: readonly string[]): boolean {
  if (email !== null) {
    const address = email.toLowerCase();
    if (lists.allowEmails.includes(address)) return true;
    if (lists.allowEmailDomains.includes(address.slice(address.lastIndexOf('@') + 1))) return true;
  }
  return groups.some((group) => lists.allowGroups.includes(group));
}
