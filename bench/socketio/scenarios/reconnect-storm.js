module.exports = async () => { throw new Error("todo"); };
