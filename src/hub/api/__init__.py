"""The GraphQL API (Strawberry): thin resolvers that parse, call one service
function through the runtime, and map the result or the domain error."""
