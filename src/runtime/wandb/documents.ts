/**
 * The GraphQL documents we send, named as the W&B SDK names them. Selections are
 * kept to what the reader uses: `summaryMetrics` rides along in the run list so one request gives
 * both runs of a group, and no `historyKeys`/`config`/`systemMetrics`, which can be large.
 */
import type { GraphQLDocument } from './graphqlClient.js';

export const GET_DEFAULT_ENTITY: GraphQLDocument = {
  operation: 'GetDefaultEntity',
  text: `query GetDefaultEntity {
  viewer {
    id
    entity
  }
}`,
};

/** Variables: project, entity, filters (a JSON *string*), order, perPage. */
export const GROUP_RUNS: GraphQLDocument = {
  operation: 'Runs',
  text: `query Runs($project: String!, $entity: String!, $perPage: Int = 50, $order: String, $filters: JSONString) {
  project(name: $project, entityName: $entity) {
    runs(filters: $filters, first: $perPage, order: $order) {
      edges {
        node {
          name
          displayName
          state
          tags
          createdAt
          summaryMetrics
        }
      }
    }
  }
}`,
};

/** Variables: project, entity, name (the run id), specs (a list of JSON strings, one per key). */
export const RUN_SAMPLED_HISTORY: GraphQLDocument = {
  operation: 'RunSampledHistory',
  text: `query RunSampledHistory($project: String!, $entity: String!, $name: String!, $specs: [JSONString!]!) {
  project(name: $project, entityName: $entity) {
    run(name: $name) {
      sampledHistory(specs: $specs)
    }
  }
}`,
};

export interface DefaultEntityData {
  viewer: { id: string; entity: string | null } | null;
}

export interface GroupRunNode {
  name: string;
  displayName: string | null;
  state: string | null;
  tags: string[] | null;
  createdAt: string;
  summaryMetrics: string | null;
}

export interface GroupRunsData {
  project: { runs: { edges: { node: GroupRunNode }[] } | null } | null;
}

export interface SampledHistoryData {
  project: { run: { sampledHistory: unknown[] | null } | null } | null;
}
