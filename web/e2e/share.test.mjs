// End-to-end tests of sharing (issue 23): the invitation e-mail, what the
// share dialog says each person can do, and a plan change reaching an open
// board without a reload. The server runs without SMTP, so mail is read
// from <data>/outbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skip, withServerAndBrowser } from './harness.mjs';
import { login, createBoard, addNote, synced } from './helpers.mjs';

let server, browser;
withServerAndBrowser((s, b) => {
  server = s;
  browser = b;
});

async function userPage(email) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await login(page, server, email);
  return { ctx, page };
}

test('inviting someone mails them the link, and the dialog says what they can do and why', { skip }, async () => {
  const ada = await userPage('ada-share@example.com');
  const id = await createBoard(ada.page, 'Launch plan');
  await ada.page.getByRole('button', { name: 'Share', exact: true }).click();
  const share = ada.page.getByRole('dialog', { name: 'Share this board' });
  // Before inviting: the rule, from the server's plan table.
  await share.getByText('on pro or team they can view and edit the board; on other plans (such as free) they can only view it.').waitFor();
  await share.getByLabel('E-mail address to invite').fill('gus-share@example.com');
  await share.getByRole('button', { name: 'Invite' }).click();
  // After: this person, on free, views only, and why.
  const why = 'View only: on the free plan, invitees view boards. They can edit once their plan is pro or team.';
  await share.getByText(`gus-share@example.com is invited and gets an e-mail with the link. ${why}`).waitFor();
  await share.getByRole('listitem').filter({ hasText: 'gus-share@example.com' }).getByText(why).waitFor();
  await share.getByRole('button', { name: 'Close' }).click();

  const body = await server.invitation('gus-share@example.com');
  assert.match(body, /ada-share@example\.com invited you to the board "Launch plan"/);
  assert.match(body, /You can view it, but not edit it: on your plan \(free\)/);
  const link = body.match(/https?:\/\/\S+\/b\/\S+/)?.[0];
  assert.equal(link, `${server.url}/b/${id}`);

  // The link opens the board for the invitee, view only.
  const gus = await userPage('gus-share@example.com');
  await gus.page.goto(link);
  await gus.page.locator('[data-connection="online"]').waitFor();
  await gus.page.getByText(/View only/).first().waitFor();
  assert.equal(await gus.page.getByRole('button', { name: '+ Note' }).count(), 0);
  await gus.ctx.close();
  await ada.ctx.close();
});

test('an upgrade turns a viewer\'s open board editable without a reload, and a downgrade back', { skip }, async () => {
  const ada = await userPage('ada-plan@example.com');
  const id = await createBoard(ada.page, 'Plan change');
  const inv = await ada.page.request.post(`${server.url}/api/boards/${id}/invite`, { data: { email: 'hal-plan@example.com' } });
  assert.equal(inv.status(), 200);

  const hal = await userPage('hal-plan@example.com');
  await hal.page.goto(`${server.url}/b/${id}`);
  await hal.page.locator('[data-connection="online"]').waitFor();
  await hal.page.getByText(/View only/).first().waitFor();
  assert.equal(await hal.page.getByRole('button', { name: '+ Note' }).count(), 0);
  // A reload would lose this mark.
  await hal.page.evaluate(() => (window.__sameDocument = true));

  server.setPlan('hal-plan@example.com', 'pro');
  await hal.page.getByRole('button', { name: '+ Note' }).waitFor();
  assert.equal(await hal.page.getByText(/View only/).count(), 0);
  await addNote(hal.page, 'Edited after the upgrade');
  await synced(hal.page);
  await ada.page.locator('.note', { hasText: 'Edited after the upgrade' }).waitFor({ timeout: 15000 });

  server.setPlan('hal-plan@example.com', 'free');
  await hal.page.getByText(/View only/).first().waitFor();
  assert.equal(await hal.page.getByRole('button', { name: '+ Note' }).count(), 0);
  assert.equal(await hal.page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
  await hal.ctx.close();
  await ada.ctx.close();
});
