CREATE TABLE `access_policies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`domain_id` integer,
	`http_service_id` integer,
	`mode` text DEFAULT 'public' NOT NULL,
	`provider_id` integer,
	`allow_emails` text DEFAULT '[]' NOT NULL,
	`allow_email_domains` text DEFAULT '[]' NOT NULL,
	`allow_groups` text DEFAULT '[]' NOT NULL,
	`password_hash` text,
	`share_links` integer DEFAULT false NOT NULL,
	`bypass_paths` text DEFAULT '[]' NOT NULL,
	`bypass_networks` text DEFAULT '[]' NOT NULL,
	`session_seconds` integer DEFAULT 86400 NOT NULL,
	`epoch` integer DEFAULT 1 NOT NULL,
	`set_by` text DEFAULT 'admin' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`domain_id`) REFERENCES `domains`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`http_service_id`) REFERENCES `http_services`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`provider_id`) REFERENCES `identity_providers`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `access_policies_domain_uq` ON `access_policies` (`domain_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `access_policies_service_uq` ON `access_policies` (`http_service_id`);--> statement-breakpoint
CREATE INDEX `access_policies_provider_idx` ON `access_policies` (`provider_id`);--> statement-breakpoint
CREATE TABLE `access_sessions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`sid` text NOT NULL,
	`policy_id` integer NOT NULL,
	`http_service_id` integer,
	`host` text NOT NULL,
	`method` text NOT NULL,
	`share_link_id` integer,
	`subject` text,
	`email` text,
	`groups` text DEFAULT '[]' NOT NULL,
	`address` text,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`policy_id`) REFERENCES `access_policies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`http_service_id`) REFERENCES `http_services`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`share_link_id`) REFERENCES `access_share_links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `access_sessions_sid_unique` ON `access_sessions` (`sid`);--> statement-breakpoint
CREATE INDEX `access_sessions_policy_idx` ON `access_sessions` (`policy_id`,`id`);--> statement-breakpoint
CREATE INDEX `access_sessions_expiry_idx` ON `access_sessions` (`expires_at`);--> statement-breakpoint
CREATE INDEX `access_sessions_link_idx` ON `access_sessions` (`share_link_id`);--> statement-breakpoint
CREATE TABLE `access_share_links` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`http_service_id` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`path_prefix` text,
	`expires_at` text,
	`revoked_at` text,
	`created_by` text DEFAULT 'admin' NOT NULL,
	`last_used_at` text,
	`uses` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`http_service_id`) REFERENCES `http_services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `access_share_links_token_hash_unique` ON `access_share_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `access_share_links_service_idx` ON `access_share_links` (`http_service_id`,`id`);--> statement-breakpoint
CREATE TABLE `identity_providers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`issuer` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_enc` text,
	`scopes` text DEFAULT '["openid","email","profile"]' NOT NULL,
	`groups_claim` text DEFAULT 'groups' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_providers_name_unique` ON `identity_providers` (`name`);