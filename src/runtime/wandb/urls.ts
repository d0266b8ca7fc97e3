/** W&B URLs: the GraphQL endpoint and the web app's run page. */

/** `baseUrl` comes from settings with its trailing slashes already stripped. */
export function graphqlEndpoint(baseUrl: string): string {
  return `${baseUrl}/graphql`;
}

/** The SDK's `api_to_app_url`: api.wandb.ai -> wandb.ai, api.<host> -> app.<host>, else the same. */
export function appUrlFromApiUrl(baseUrl: string): string {
  let app = baseUrl;
  if (app.includes('://api.wandb.test')) app = app.replace('://api.', '://app.');
  else if (app.includes('://api.wandb.')) app = app.replace('://api.', '://');
  else if (app.includes('://api.')) app = app.replace('://api.', '://app.');
  return app.replace(/\/+$/, '');
}

/** Python's `quote(part, safe="")`: encodeURIComponent also leaves !'()* alone, Python does not. */
function quote(part: string): string {
  return encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `<app>/<entity>/<project>/runs/<run name>`, where the name is the run id, not the display name. */
export function runUrl(appUrl: string, entity: string, project: string, runName: string): string {
  return `${appUrl}/${[entity, project, 'runs', runName].map(quote).join('/')}`;
}
