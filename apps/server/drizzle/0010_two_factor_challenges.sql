CREATE TABLE `second_factor_failures` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`at_ms` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `second_factor_failures_user_idx` ON `second_factor_failures` (`user_id`,`at_ms`);--> statement-breakpoint
CREATE INDEX `second_factor_failures_at_idx` ON `second_factor_failures` (`at_ms`);--> statement-breakpoint
CREATE TABLE `sign_in_challenges` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`expires_at_ms` integer NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sign_in_challenges_user_idx` ON `sign_in_challenges` (`user_id`);--> statement-breakpoint
CREATE INDEX `sign_in_challenges_expiry_idx` ON `sign_in_challenges` (`expires_at_ms`);