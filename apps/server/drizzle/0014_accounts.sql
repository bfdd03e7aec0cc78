CREATE TABLE `account_invites` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`token_hash` text NOT NULL,
	`username` text NOT NULL,
	`role` text NOT NULL,
	`created_by` integer,
	`expires_at` text NOT NULL,
	`used_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_invites_token_hash_unique` ON `account_invites` (`token_hash`);--> statement-breakpoint
CREATE INDEX `account_invites_expiry_idx` ON `account_invites` (`expires_at`);--> statement-breakpoint
ALTER TABLE `audit_events` ADD `actor_account_id` integer;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `actor_via` text;--> statement-breakpoint
CREATE INDEX `audit_account_idx` ON `audit_events` (`actor_account_id`,`id`);--> statement-breakpoint
ALTER TABLE `identity_providers` ADD `console_sign_in` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `identity_providers` ADD `console_group_roles` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `via` text DEFAULT 'password' NOT NULL;--> statement-breakpoint
ALTER TABLE `sign_in_challenges` ADD `via` text DEFAULT 'password' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `role` text DEFAULT 'viewer' NOT NULL;--> statement-breakpoint
-- Hand-written: the accounts of before roles (the one admin of the spec) are owners; a new account's role is
-- always named when it is made, and the column's default is the least privileged role.
UPDATE `users` SET `role` = 'owner';--> statement-breakpoint
ALTER TABLE `users` ADD `enabled` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `password_sign_in` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `identity_provider_id` integer REFERENCES identity_providers(id);--> statement-breakpoint
ALTER TABLE `users` ADD `identity_issuer` text;--> statement-breakpoint
ALTER TABLE `users` ADD `identity_subject` text;--> statement-breakpoint
ALTER TABLE `users` ADD `identity_email` text;--> statement-breakpoint
ALTER TABLE `users` ADD `last_sign_in_at` text;--> statement-breakpoint
CREATE UNIQUE INDEX `users_identity_idx` ON `users` (`identity_issuer`,`identity_subject`);