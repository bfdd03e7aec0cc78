CREATE TABLE `sign_in_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`client_key` text,
	`username` text NOT NULL,
	`at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sign_in_attempts_client_idx` ON `sign_in_attempts` (`client_key`,`at_ms`);--> statement-breakpoint
CREATE INDEX `sign_in_attempts_username_idx` ON `sign_in_attempts` (`username`,`at_ms`);--> statement-breakpoint
CREATE INDEX `sign_in_attempts_at_idx` ON `sign_in_attempts` (`at_ms`);