CREATE TABLE "second_factor_failures" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" bigint NOT NULL,
	"at_ms" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sign_in_challenges" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" bigint NOT NULL,
	"expires_at_ms" bigint NOT NULL,
	"failures" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "second_factor_failures" ADD CONSTRAINT "second_factor_failures_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sign_in_challenges" ADD CONSTRAINT "sign_in_challenges_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "second_factor_failures_user_idx" ON "second_factor_failures" USING btree ("user_id","at_ms");--> statement-breakpoint
CREATE INDEX "second_factor_failures_at_idx" ON "second_factor_failures" USING btree ("at_ms");--> statement-breakpoint
CREATE INDEX "sign_in_challenges_user_idx" ON "sign_in_challenges" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sign_in_challenges_expiry_idx" ON "sign_in_challenges" USING btree ("expires_at_ms");